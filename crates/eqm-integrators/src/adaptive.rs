//! Adaptive explicit Runge–Kutta methods from embedded pairs: rkf45 (Fehlberg 4(5)), dopri5
//! (Dormand–Prince 5(4)), or a user's tableau with embedded weights.
//!
//! Input: a [`Tableau`] with embedded weights `b̂` and [`Options`] (`rtol`, `atol`, optional
//! initial and maximum step). Output: accepted steps whose local error estimate
//! `err = ‖h Σ (b_j − b̂_j) k_j‖` is at most 1 in Hairer's norm
//!
//! ```text
//! err = sqrt( (1/n) Σ_i (e_i / sc_i)² ),   sc_i = atol_i + rtol · max(|x_i|, |x_new,i|)
//! ```
//!
//! with the step size chosen as in Hairer's DOPRI5 (Hairer, Nørsett, Wanner, Solving ODEs I,
//! II.4 and the code `dopri5.f`): automatic initial step (`hinit`), PI control with β = 0.04,
//! safety factor 0.9, the step changing by a factor between 0.2 and 10, no growth right after a
//! rejection. Dense output is DOPRI5's own fourth-order continuous extension for dopri5 and the
//! cubic Hermite interpolant otherwise.
//!
//! A trial step whose right-hand side fails or produces NaN/infinity is rejected like one with
//! a large error, since a smaller step often avoids it (an overflow in a too-long stage, a
//! Newton solve started too far away); only when the step size underflows is that failure
//! reported. It deliberately does not detect stiffness: that is for the `auto` solver above.

use crate::control::{check_budget, error_norm};
use crate::error::{IntegrationError, Quantity, check_finite};
use crate::explicit::RkStages;
use crate::options::Options;
use crate::stepper::{Stats, StepEnds, StepInfo, Stepper, step_accessors, zeroed};
use crate::system::{OdeSystem, eval_rhs};
use crate::tableau::{self, Tableau};

/// Safety factor on the predicted optimal step.
const SAFETY: f64 = 0.9;
/// The step shrinks by at most this factor per attempt.
const FAC_MIN: f64 = 0.2;
/// The step grows by at most this factor per step.
const FAC_MAX: f64 = 10.0;
/// Weight of the previous error in the PI controller (Lund stabilisation, Hairer's default).
const BETA: f64 = 0.04;

/// How the stepper interpolates inside a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dense {
    Hermite,
    /// Shampine's continuous extension of the Dormand–Prince pair.
    DormandPrince,
}

/// An adaptive stepper for an embedded explicit Runge–Kutta pair.
#[derive(Debug)]
pub struct Adaptive {
    tableau: Tableau,
    dense: Dense,
    options: Options,
    fsal: bool,
    /// `b − b̂`: the weights of the error estimate.
    error_weights: Vec<f64>,
    /// The local error estimate is O(h^(q+1)), q the lower of the two orders.
    q: u32,
    atol: Vec<f64>,
    ends: StepEnds,
    stages: RkStages,
    x_new: Vec<f64>,
    f_new: Vec<f64>,
    /// DOPRI5's `rcont5 = h Σ d_j k_j` of the last accepted step.
    dense_term: Vec<f64>,
    /// The step size to try next.
    h: f64,
    /// The error of the last accepted step, for the PI controller (`facold` in DOPRI5).
    err_prev: f64,
    last_rejected: bool,
    /// `h·ρ` of the last accepted step (see [`Adaptive::stiffness`]).
    stiffness: f64,
    stats: Stats,
}

impl Adaptive {
    /// A stepper for an embedded pair with Hermite dense output. A tableau without embedded
    /// weights is refused by `initialize`.
    pub fn new(tableau: Tableau, options: Options) -> Self {
        let error_weights = match tableau.b_hat() {
            Some(b_hat) => tableau.b().iter().zip(b_hat).map(|(b, bh)| b - bh).collect(),
            None => Vec::new(),
        };
        Adaptive {
            fsal: tableau.is_fsal(),
            q: tableau.order().min(tableau.embedded_order().unwrap_or(tableau.order())),
            tableau,
            dense: Dense::Hermite,
            options,
            error_weights,
            atol: Vec::new(),
            ends: StepEnds::default(),
            stages: RkStages::default(),
            x_new: Vec::new(),
            f_new: Vec::new(),
            dense_term: Vec::new(),
            h: 0.0,
            err_prev: 1e-4,
            last_rejected: false,
            stiffness: 0.0,
            stats: Stats::default(),
        }
    }

    /// DOPRI5: the Dormand–Prince 5(4) pair with its continuous extension.
    pub fn dopri5(options: Options) -> Self {
        Adaptive {
            dense: Dense::DormandPrince,
            ..Adaptive::new(tableau::DORMAND_PRINCE54, options)
        }
    }

    fn max_step(&self) -> f64 {
        self.options.max_step.unwrap_or(f64::INFINITY)
    }

    /// Hairer's `hinit`: a step for which an explicit Euler step changes the solution and its
    /// derivative by about 1% of the tolerance scale, bounded by `h_max`. The norms are root
    /// mean squares as in the book (II.4), not the sums of `dopri5.f`, so that the choice does
    /// not depend on the dimension.
    fn initial_step(&mut self, sys: &mut dyn OdeSystem, h_max: f64) -> f64 {
        let ends = &self.ends;
        let scale = |i: usize| self.atol[i] + self.options.rtol * ends.x[i].abs();
        let mean_square = |value: &dyn Fn(usize) -> f64| {
            let n = ends.x.len();
            (0..n).map(|i| (value(i) / scale(i)).powi(2)).sum::<f64>() / n.max(1) as f64
        };
        let d0 = mean_square(&|i| ends.x[i]);
        let d1 = mean_square(&|i| ends.f[i]);
        let mut h = if d0 <= 1e-10 || d1 <= 1e-10 {
            1e-6
        } else {
            (d0 / d1).sqrt() * 0.01
        };
        h = h.min(h_max);
        // One explicit Euler step estimates the second derivative.
        for (i, x) in self.x_new.iter_mut().enumerate() {
            *x = ends.x[i] + h * ends.f[i];
        }
        if eval_rhs(sys, ends.t + h, &self.x_new, &mut self.f_new, &mut self.stats).is_err() {
            // The controller will shrink the step if the trial fails again.
            return h;
        }
        let f_new = &self.f_new;
        let d2 = mean_square(&|i| f_new[i] - ends.f[i]).sqrt() / h;
        let d12 = d2.max(d1.sqrt());
        let h1 = if d12 <= 1e-15 {
            (h * 1e-3).max(1e-6)
        } else {
            (0.01 / d12).powf(1.0 / f64::from(self.q + 1))
        };
        (100.0 * h).min(h1).min(h_max)
    }

    /// One trial step of size `h` to `t_new`: the stages, the new solution in `x_new` and the
    /// error estimate. For a non-"first same as last" tableau the derivative at the new point is
    /// only evaluated (into `f_new`) when the error is acceptable.
    fn attempt(&mut self, sys: &mut dyn OdeSystem, h: f64, t_new: f64) -> Result<f64, IntegrationError> {
        self.stages
            .compute(&self.tableau, sys, &self.ends, h, &mut self.stats)?;
        let (ends, stages) = (&self.ends, &mut self.stages);
        stages.combine(self.tableau.b(), &ends.f, h, Some(&ends.x), &mut self.x_new);
        check_finite(t_new, &self.x_new, Quantity::State)?;
        let mut error = std::mem::take(&mut stages.scratch);
        stages.combine(&self.error_weights, &ends.f, h, None, &mut error);
        let err = error_norm(|i| error[i], &ends.x, &self.x_new, &self.atol, self.options.rtol);
        self.stages.scratch = error;
        if err <= 1.0 {
            // Hairer's stiffness test (DOPRI5's `hlamb`): the last two stages are both at
            // t + h, at the new point and at the sixth stage's state, which differ along the
            // directions the error lives in, the stiff ones.
            let s = self.tableau.stages();
            if self.fsal && s >= 3 {
                let row: Vec<f64> = (0..s - 2).map(|j| self.tableau.a(s - 2, j)).collect();
                let mut before_last = std::mem::take(&mut self.stages.scratch);
                self.stages
                    .combine(&row, &self.ends.f, h, Some(&self.ends.x), &mut before_last);
                let (k_last, k_before) = (self.stages.k(s - 2), self.stages.k(s - 3));
                let numerator: f64 = k_last.iter().zip(k_before).map(|(a, b)| (a - b) * (a - b)).sum();
                let denominator: f64 = self
                    .x_new
                    .iter()
                    .zip(&before_last)
                    .map(|(a, b)| (a - b) * (a - b))
                    .sum();
                self.stiffness = if denominator > 0.0 {
                    h * (numerator / denominator).sqrt()
                } else {
                    0.0
                };
                self.stages.scratch = before_last;
            }
            if self.fsal {
                std::mem::swap(&mut self.f_new, self.stages.last_mut());
            } else {
                eval_rhs(sys, t_new, &self.x_new, &mut self.f_new, &mut self.stats)?;
            }
        }
        Ok(err)
    }

    /// Accepts the trial step: DOPRI5's dense term while the stages are still there, then the
    /// new point becomes the current one.
    fn accept(&mut self, h: f64, t_new: f64) -> StepInfo {
        if self.dense == Dense::DormandPrince {
            // The last stage k7 was swapped into f_new; the formula wants it in its place.
            let d = &tableau::DORMAND_PRINCE54_DENSE;
            std::mem::swap(&mut self.f_new, self.stages.last_mut());
            self.stages.combine(d, &self.ends.f, h, None, &mut self.dense_term);
            std::mem::swap(&mut self.f_new, self.stages.last_mut());
        }
        self.ends
            .accept(t_new, &mut self.x_new, &mut self.f_new, &mut self.stats)
    }
}

impl Adaptive {
    /// `h·ρ` of the last accepted step (Hairer's estimate; 0 for tableaux without the "first
    /// same as last" property): an explicit method whose steps keep this near its stability
    /// boundary (about 3.3 for DOPRI5) is limited by stability, not accuracy.
    pub(crate) fn stiffness(&self) -> f64 {
        self.stiffness
    }
}

impl Stepper for Adaptive {
    fn name(&self) -> &str {
        self.tableau.name()
    }

    fn initialize(&mut self, sys: &mut dyn OdeSystem, t0: f64, x0: &[f64]) -> Result<(), IntegrationError> {
        if self.tableau.b_hat().is_none() {
            return Err(IntegrationError::invalid(format!(
                "{} has no embedded weights, so it cannot adapt its step size",
                self.tableau.name()
            )));
        }
        let dim = sys.dim();
        self.atol = self.options.atol_per_component(dim)?;
        self.ends.reset(dim, &mut self.stats);
        self.stages.resize(self.tableau.stages(), dim);
        zeroed(dim, [&mut self.x_new, &mut self.f_new, &mut self.dense_term]);
        self.restart(t0, x0)
    }

    fn step(&mut self, sys: &mut dyn OdeSystem, t_limit: f64) -> Result<StepInfo, IntegrationError> {
        let t = self.ends.t;
        let fresh_start = self
            .ends
            .begin_step(sys, t_limit, &mut self.stats, self.options.max_steps)?;
        if fresh_start {
            let h_max = self.max_step().min(t_limit - t);
            self.h = match self.options.initial_step {
                Some(h) => h.min(h_max),
                None => self.initial_step(sys, h_max),
            };
        }
        // The failure of the last rejected trial, reported if the step size underflows.
        let mut failure = None;
        loop {
            check_budget(t, &self.stats, self.options.max_steps)?;
            let h_ctrl = self.h.min(self.max_step());
            if h_ctrl.is_nan() || h_ctrl <= 10.0 * f64::EPSILON * t.abs() {
                return Err(failure.unwrap_or(IntegrationError::StepSizeUnderflow { time: t, step: h_ctrl }));
            }
            // Stretch the last step by up to 1% rather than leave a sliver before the limit.
            let (h, t_new) = if t + 1.01 * h_ctrl >= t_limit {
                (t_limit - t, t_limit)
            } else {
                (h_ctrl, t + h_ctrl)
            };
            let err = match self.attempt(sys, h, t_new) {
                Ok(err) => err,
                Err(e) if e.is_recoverable() => {
                    failure = Some(e);
                    self.stats.rejected += 1;
                    self.last_rejected = true;
                    self.h = h * FAC_MIN;
                    continue;
                }
                Err(e) => return Err(e),
            };
            // DOPRI5's exponent: 1/(q+1), less the PI controller's share 0.75 β.
            let fac11 = err.powf(1.0 / f64::from(self.q + 1) - 0.75 * BETA);
            if err <= 1.0 {
                // PI control: the previous error damps the change (DOPRI5's `facold`).
                let fac = (fac11 / self.err_prev.powf(BETA) / SAFETY).clamp(1.0 / FAC_MAX, 1.0 / FAC_MIN);
                let mut h_next = (h / fac).min(self.max_step());
                if self.last_rejected {
                    h_next = h_next.min(h);
                }
                self.err_prev = err.max(1e-4);
                self.last_rejected = false;
                self.h = h_next;
                return Ok(self.accept(h, t_new));
            }
            self.stats.rejected += 1;
            self.last_rejected = true;
            // NaN-safe: `min` returns the other operand when one is NaN.
            self.h = h / (fac11 / SAFETY).min(1.0 / FAC_MIN);
        }
    }

    fn interpolate(&self, t: f64, out: &mut [f64]) {
        let ends = &self.ends;
        let h = ends.t - ends.t_prev;
        if self.dense == Dense::Hermite || h == 0.0 {
            ends.hermite(t, out);
            return;
        }
        // DOPRI5's `contd5` with rcont1..5 formed on the fly from both ends and the stored
        // dense term, so no extra buffers are kept per step.
        let theta = (t - ends.t_prev) / h;
        let theta1 = 1.0 - theta;
        for (i, o) in out.iter_mut().enumerate() {
            let y0 = ends.x_prev[i];
            let diff = ends.x[i] - y0;
            let bspl = h * ends.f_prev[i] - diff;
            let r4 = diff - h * ends.f[i] - bspl;
            *o = y0 + theta * (diff + theta1 * (bspl + theta * (r4 + theta1 * self.dense_term[i])));
        }
    }

    fn restart(&mut self, t: f64, x: &[f64]) -> Result<(), IntegrationError> {
        self.ends.restart(t, x)?;
        // The next step selects a fresh initial step and forgets the controller's history.
        self.err_prev = 1e-4;
        self.last_rejected = false;
        Ok(())
    }

    step_accessors!(ends.x, ends.t);
}
