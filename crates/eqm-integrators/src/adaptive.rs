//! Adaptive explicit Runge–Kutta methods from embedded pairs: rkf45 (Fehlberg 4(5)), dopri5
//! (Dormand–Prince 5(4)), tsit5 (Tsitouras 5(4)), Verner's vern6, vern7, vern8 and vern9, or a
//! user's tableau with embedded weights.
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
//! rejection. Dense output is each pair's own continuous extension (DOPRI5's fourth-order one,
//! Tsitouras' fourth-order one, Verner's interpolants with their extra stages, see
//! [`crate::pairs`]) and the cubic Hermite interpolant for rkf45 and user tableaux.
//!
//! The work outside the right-hand side is a few passes over the state per stage: all stage
//! derivatives live in one buffer, every linear combination of stages is one fused loop over up
//! to eight of them ([`crate::explicit`]), the error norm is formed in the same pass as the
//! error estimate, a "first same as last" pair's last stage is evaluated straight into the new
//! point, and nothing is allocated after `initialize`. The stages of the last accepted step are
//! kept (two buffers, exchanged on acceptance), so dense output is formed only when it is asked
//! for, and the interpolants' extra stages are evaluated with each accepted step (their
//! right-hand side evaluations are counted; `interpolate` has no system to evaluate them
//! later).
//!
//! A trial step whose right-hand side fails or produces NaN/infinity is rejected like one with
//! a large error, since a smaller step often avoids it (an overflow in a too-long stage, a
//! Newton solve started too far away); only when the step size underflows is that failure
//! reported. It deliberately does not detect stiffness: that is for the `auto` solver above.

use crate::error::{IntegrationError, Quantity, check_finite};
use crate::explicit::{RkStages, Start, combination, leading_passes, weighted, with_terms};
use crate::options::Options;
use crate::pairs::{self, Interpolant};
use crate::stats::Stats;
use crate::stats::check_budget;
use crate::stepper::{StepEnds, StepInfo, Stepper, step_accessors, zeroed};
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
/// The most stages an interpolant may use (Verner's 9(8) pair has 26).
const MAX_DENSE_STAGES: usize = 32;

/// How the stepper interpolates inside a step.
#[derive(Debug, Clone, Copy)]
enum Dense {
    Hermite,
    /// Shampine's continuous extension of the Dormand–Prince pair in Hairer's form (`contd5`),
    /// from both ends of the step and `h Σ d_j k_j`.
    DormandPrince,
    /// A continuous extension `x + h Σ_j b_j(θ) k_j` over the stages of the tableau and the
    /// interpolant's extra ones.
    Polynomial(&'static Interpolant),
}

/// The stages of a step whose derivative is the one at its new point, which is kept once (in
/// `f_new`, or in `ends.f` after acceptance): the last stage of a "first same as last" tableau,
/// and an interpolant's extra stage whose row is `b` at node 1.
#[derive(Debug, Clone, Copy)]
struct AtNewPoint {
    fsal_last: Option<usize>,
    extra: Option<usize>,
}

impl AtNewPoint {
    /// The derivative of stage `j` (from 0) of a step, given those at its start and its new
    /// point and `others`, the buffer of stages 2, 3, ... (as [`RkStages`] keeps them).
    fn stage<'a>(self, j: usize, start: &'a [f64], new_point: &'a [f64], others: &'a [f64]) -> &'a [f64] {
        let dim = start.len();
        if j == 0 {
            start
        } else if Some(j) == self.fsal_last || Some(j) == self.extra {
            new_point
        } else {
            &others[(j - 1) * dim..j * dim]
        }
    }
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
    /// The stages of the trial step.
    stages: RkStages,
    /// The stage derivatives of the last accepted step (exchanged with the trial's on
    /// acceptance), for dense output.
    accepted: Vec<f64>,
    /// The extra stage of an interpolant that is the derivative at the new point (the row of
    /// `b` at node 1), which the step evaluates anyway.
    extra_at_new_point: Option<usize>,
    /// The state of the last stage but one of the last accepted step, for
    /// [`Adaptive::stiffness`] ("first same as last" tableaux only).
    before_last: Vec<f64>,
    /// Partial sums of an error estimate with more than eight terms.
    error: Vec<f64>,
    x_new: Vec<f64>,
    f_new: Vec<f64>,
    /// The step size to try next.
    h: f64,
    /// The error of the last accepted step, for the PI controller (`facold` in DOPRI5).
    err_prev: f64,
    last_rejected: bool,
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
            accepted: Vec::new(),
            extra_at_new_point: None,
            before_last: Vec::new(),
            error: Vec::new(),
            x_new: Vec::new(),
            f_new: Vec::new(),
            h: 0.0,
            err_prev: 1e-4,
            last_rejected: false,
            stats: Stats::default(),
        }
    }

    /// DOPRI5: the Dormand–Prince 5(4) pair with Shampine's fourth-order continuous extension.
    pub fn dopri5(options: Options) -> Self {
        Adaptive {
            dense: Dense::DormandPrince,
            ..Adaptive::new(tableau::DORMAND_PRINCE54, options)
        }
    }

    /// Tsitouras' 5(4) pair with its fourth-order continuous extension.
    pub fn tsit5(options: Options) -> Self {
        Self::with_interpolant(pairs::TSIT5, &pairs::TSIT5_INTERPOLANT, options)
    }

    /// Verner's 6(5) pair with its sixth-order interpolant (three extra stages per step).
    pub fn vern6(options: Options) -> Self {
        Self::with_interpolant(pairs::VERN6, &pairs::VERN6_INTERPOLANT, options)
    }

    /// Verner's 7(6) pair with its interpolant (five extra evaluations per step).
    pub fn vern7(options: Options) -> Self {
        Self::with_interpolant(pairs::VERN7, &pairs::VERN7_INTERPOLANT, options)
    }

    /// Verner's 8(7) pair with its eighth-order interpolant (seven extra evaluations per step).
    pub fn vern8(options: Options) -> Self {
        Self::with_interpolant(pairs::VERN8, &pairs::VERN8_INTERPOLANT, options)
    }

    /// Verner's 9(8) pair with its ninth-order interpolant (nine extra evaluations per step).
    pub fn vern9(options: Options) -> Self {
        Self::with_interpolant(pairs::VERN9, &pairs::VERN9_INTERPOLANT, options)
    }

    fn with_interpolant(tableau: Tableau, interpolant: &'static Interpolant, options: Options) -> Self {
        // `interpolate` keeps the weights of the stages in an array.
        assert!(interpolant.stages() <= MAX_DENSE_STAGES, "{}", tableau.name());
        let s = tableau.stages();
        // An extra stage whose row is `b` at node 1 is the derivative at the new point.
        let extra = (0..interpolant.extra_stages()).find(|&i| {
            let row = interpolant.extra_row(i);
            interpolant.extra_c(i) == 1.0 && row[..s] == *tableau.b() && row[s..].iter().all(|a| *a == 0.0)
        });
        Adaptive {
            dense: Dense::Polynomial(interpolant),
            extra_at_new_point: extra.map(|i| s + i),
            ..Adaptive::new(tableau, options)
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
        crate::control::resolvable_initial_step(ends.t, (100.0 * h).min(h1)).min(h_max)
    }

    /// One trial step of size `h` to `t_new`: the stages, the new solution in `x_new` and the
    /// error estimate. The derivative at the new point (`f_new`) and the interpolant's extra
    /// stages are only evaluated when the error is acceptable, before the step is accepted, so
    /// that a failure among them rejects the step like any other.
    fn attempt(&mut self, sys: &mut dyn OdeSystem, h: f64, t_new: f64) -> Result<f64, IntegrationError> {
        let s = self.tableau.stages();
        // A "first same as last" tableau's last stage is the new point: evaluated straight into
        // `x_new` and `f_new`.
        let last = self.fsal.then_some((&mut self.x_new[..], &mut self.f_new[..]));
        self.stages
            .compute_into(&self.tableau, sys, &self.ends, h, &mut self.stats, last)?;
        let at_new_point = self.at_new_point();
        let (ends, stages, f_new) = (&self.ends, &self.stages, &self.f_new);
        let trial = |j: usize| at_new_point.stage(j, &ends.f, f_new, stages.derivatives());
        if !self.fsal && !combination(&mut self.x_new, Some(&ends.x), weighted(self.tableau.b(), h), trial) {
            check_finite(t_new, &self.x_new, Quantity::State)?;
        }
        let err = error_estimate(
            weighted(&self.error_weights, h),
            trial,
            &mut self.error,
            &ends.x,
            &self.x_new,
            &self.atol,
            self.options.rtol,
        );
        if err <= 1.0 {
            if !self.fsal {
                eval_rhs(sys, t_new, &self.x_new, &mut self.f_new, &mut self.stats)?;
            }
            if let Dense::Polynomial(interpolant) = self.dense {
                for i in s..interpolant.stages() {
                    if Some(i) == at_new_point.extra {
                        continue;
                    }
                    let (ends, f_new) = (&self.ends, &self.f_new);
                    let (derivative, done) = self.stages.split_at_stage(i - 1);
                    let stage = |j: usize| at_new_point.stage(j, &ends.f, f_new, done);
                    let t_stage = ends.t + interpolant.extra_c(i - s) * h;
                    let row = interpolant.extra_row(i - s);
                    // The error estimate's buffer is free now (the scratch holds the state the stiffness
                    // estimate reads).
                    let state = &mut self.error;
                    if !combination(state, Some(&ends.x), weighted(&row[..i], h), stage) {
                        check_finite(t_stage, state, Quantity::State)?;
                    }
                    eval_rhs(sys, t_stage, state, derivative, &mut self.stats)?;
                }
            }
        }
        Ok(err)
    }

    /// Accepts the trial step: its stages become those of the last accepted step (for dense
    /// output), and the new point becomes the current one.
    fn accept(&mut self, t_new: f64) -> StepInfo {
        self.stages.swap_derivatives(&mut self.accepted);
        if self.fsal {
            // The state of the last stage but one, for the stiffness estimate.
            std::mem::swap(&mut self.stages.scratch, &mut self.before_last);
        }
        self.ends
            .accept(t_new, &mut self.x_new, &mut self.f_new, &mut self.stats)
    }

    /// DOPRI5's `contd5`: `x0 + θ(Δ + (1−θ)(h f0 − Δ + θ(2Δ − h f0 − h f1 + (1−θ) r)))` with
    /// `Δ = x1 − x0` and `r = h Σ d_j k_j` (Shampine's coefficients), formed component by
    /// component from both ends and the kept stages, so nothing is stored per step.
    fn dormand_prince(&self, t: f64, out: &mut [f64]) {
        let ends = &self.ends;
        let h = ends.t - ends.t_prev;
        if h == 0.0 {
            out.copy_from_slice(&ends.x);
            return;
        }
        let theta = (t - ends.t_prev) / h;
        let theta1 = 1.0 - theta;
        let mut terms = [(0.0, 0); 7];
        let mut count = 0;
        for (j, d) in tableau::DORMAND_PRINCE54_DENSE.iter().enumerate() {
            if *d != 0.0 {
                terms[count] = (h * d, j);
                count += 1;
            }
        }
        let stages: [&[f64]; 7] = std::array::from_fn(|j| self.accepted_stage(j));
        for (i, o) in out.iter_mut().enumerate() {
            // The same order of summation as the dense term used to be formed in.
            let mut dense_term = 0.0;
            for &(c, j) in &terms[..count] {
                dense_term += c * stages[j][i];
            }
            let y0 = ends.x_prev[i];
            let diff = ends.x[i] - y0;
            let bspl = h * ends.f_prev[i] - diff;
            let r4 = diff - h * ends.f[i] - bspl;
            *o = y0 + theta * (diff + theta1 * (bspl + theta * (r4 + theta1 * dense_term)));
        }
    }

    /// The derivative of stage `j` (from 0) of the last accepted step.
    fn accepted_stage(&self, j: usize) -> &[f64] {
        self.at_new_point()
            .stage(j, &self.ends.f_prev, &self.ends.f, &self.accepted)
    }

    /// The stages of a step evaluated at its new point.
    fn at_new_point(&self) -> AtNewPoint {
        AtNewPoint {
            fsal_last: self.fsal.then(|| self.tableau.stages() - 1),
            extra: self.extra_at_new_point,
        }
    }
}

impl Adaptive {
    /// `h·ρ` of the last accepted step, Hairer's estimate (DOPRI5's `hlamb`) of the step size
    /// times the dominant eigenvalue: the last two stages of a "first same as last" tableau are
    /// both at `t + h`, at the new point and at the state of the last stage but one, which differ
    /// along the directions the error lives in, the stiff ones. An explicit method whose steps
    /// keep this near its stability boundary (about 3.3 for DOPRI5) is limited by stability,
    /// not accuracy. 0 for other tableaux and before the first step.
    pub(crate) fn stiffness(&self) -> f64 {
        let s = self.tableau.stages();
        let h = self.ends.t - self.ends.t_prev;
        if !self.fsal || s < 3 || h == 0.0 {
            return 0.0;
        }
        let (k_last, k_before) = (&self.ends.f, self.accepted_stage(s - 2));
        let numerator: f64 = k_last.iter().zip(k_before).map(|(a, b)| (a - b) * (a - b)).sum();
        let denominator: f64 = self
            .ends
            .x
            .iter()
            .zip(&self.before_last)
            .map(|(a, b)| (a - b) * (a - b))
            .sum();
        if denominator > 0.0 {
            h * (numerator / denominator).sqrt()
        } else {
            0.0
        }
    }
}

/// Hairer's error norm of the estimate `e = Σ_t c_t · stage(j_t)` (`control::error_norm`), formed
/// in the same pass as the last (usually the only) eight terms of the estimate; `partial`
/// holds the sums of the terms before them when there are more.
fn error_estimate<'a>(
    terms: impl Iterator<Item = (f64, usize)>,
    stage: impl Fn(usize) -> &'a [f64],
    partial: &mut [f64],
    x: &[f64],
    x_new: &[f64],
    atol: &[f64],
    rtol: f64,
) -> f64 {
    let (start, last) = leading_passes(partial, Start::Zero, terms, &stage);
    let partial = matches!(start, Start::Out).then_some(&*partial);
    let sum = with_terms!(last.terms(), stage, |c, k| match partial {
        Some(p) => scaled_squares::<_, true>(p, c, k, x, x_new, atol, rtol),
        None => scaled_squares::<_, false>(x, c, k, x, x_new, atol, rtol),
    });
    (sum / x.len().max(1) as f64).sqrt()
}

/// The loop of [`error_estimate`] for its last `N` terms (after the partial sums when
/// `PARTIAL`, else from zero; `partial` is then not read): the estimate's component, divided
/// by its weight `atol_i + rtol·max(|x_i|, |x_new,i|)`, squared and summed, in one sequential
/// sum in the order of `control::error_norm`, so that the steps taken are those of the error
/// vector formed first and then measured (and results stay the same to the last bit).
#[inline(always)]
fn scaled_squares<const N: usize, const PARTIAL: bool>(
    partial: &[f64],
    c: [f64; N],
    k: [&[f64]; N],
    x: &[f64],
    x_new: &[f64],
    atol: &[f64],
    rtol: f64,
) -> f64 {
    let n = x.len();
    let k: [&[f64]; N] = k.map(|v| &v[..n]);
    let (x_new, atol, partial) = (&x_new[..n], &atol[..n], &partial[..n]);
    let mut sum = 0.0;
    for i in 0..n {
        let mut e = if PARTIAL { partial[i] } else { 0.0 };
        for t in 0..N {
            e += c[t] * k[t][i];
        }
        let q = e / (atol[i] + rtol * x[i].abs().max(x_new[i].abs()));
        sum += q * q;
    }
    sum
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
        let stages = match self.dense {
            Dense::Polynomial(interpolant) => interpolant.stages(),
            Dense::Hermite | Dense::DormandPrince => self.tableau.stages(),
        };
        self.stages.resize(stages, dim);
        self.accepted.clear();
        self.accepted.resize(self.stages.derivatives_len(), 0.0);
        zeroed(
            dim,
            [&mut self.x_new, &mut self.f_new, &mut self.before_last, &mut self.error],
        );
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
                return Ok(self.accept(t_new));
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
        let interpolant = match self.dense {
            Dense::Hermite => {
                ends.hermite(t, out);
                return;
            }
            Dense::DormandPrince => {
                self.dormand_prince(t, out);
                return;
            }
            Dense::Polynomial(interpolant) => interpolant,
        };
        let theta = (t - ends.t_prev) / h;
        // Both ends exactly (also right after a (re)start, when h = 0).
        if h == 0.0 || theta == 1.0 {
            out.copy_from_slice(&ends.x);
            return;
        }
        if theta == 0.0 {
            out.copy_from_slice(&ends.x_prev);
            return;
        }
        let mut w = [0.0; MAX_DENSE_STAGES];
        let w = &mut w[..interpolant.stages()];
        interpolant.step_weights_at(h, theta, w);
        combination(out, Some(&ends.x_prev), weighted(w, 1.0), |j| self.accepted_stage(j));
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
