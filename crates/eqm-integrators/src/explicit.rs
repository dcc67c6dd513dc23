//! Fixed-step explicit Runge–Kutta methods from any Butcher tableau (euler, heun, midpoint,
//! rk4, or a user's tableau), and the stage evaluation shared with the adaptive and multistep
//! steppers.
//!
//! Input: a [`Tableau`] and [`Options`] with the step size `h`. Output: steps of size `h` on the
//! grid `t0 + n·h` (a time limit inside a step ends a shorter step there, and the next step
//! returns to the grid, also after a restart), with cubic Hermite dense output from both ends'
//! values and derivatives. A failure of the right-hand side or a non-finite value ends the
//! integration at once: a fixed-step method has no smaller step to retry with.
//!
//! It deliberately does not estimate errors or adapt `h`, even when the tableau has embedded
//! weights (those go to `adaptive`).

use crate::error::{IntegrationError, Quantity, check_finite};
use crate::options::Options;
use crate::stepper::{Stats, StepEnds, StepInfo, Stepper, step_accessors, zeroed};
use crate::system::{OdeSystem, eval_rhs};
use crate::tableau::Tableau;

/// The stage derivatives of one explicit Runge–Kutta step, preallocated.
#[derive(Debug, Default)]
pub(crate) struct RkStages {
    /// `k[j]` is the derivative of stage `j + 1`; stage 0's derivative is `f(t, x)` of the
    /// step's start, which the caller already holds.
    k: Vec<Vec<f64>>,
    /// The state of the stage being evaluated; afterwards free for other uses.
    pub scratch: Vec<f64>,
}

impl RkStages {
    /// Sizes the buffers for a tableau with `stages` stages and `dim` states.
    pub fn resize(&mut self, stages: usize, dim: usize) {
        self.k.resize_with(stages.saturating_sub(1), Vec::new);
        zeroed(dim, self.k.iter_mut().chain([&mut self.scratch]));
    }

    /// Evaluates stages 2..s of a step of size `h` from the current point of `ends` (whose
    /// derivative is stage 1). Fails at the first stage whose state or derivative is not
    /// finite, or whose evaluation fails, with that stage's time.
    pub fn compute(
        &mut self,
        tableau: &Tableau,
        sys: &mut dyn OdeSystem,
        ends: &StepEnds,
        h: f64,
        stats: &mut Stats,
    ) -> Result<(), IntegrationError> {
        for i in 1..tableau.stages() {
            let (done, rest) = self.k.split_at_mut(i - 1);
            let row = tableau.a_row(i);
            self.scratch.copy_from_slice(&ends.x);
            axpy(&mut self.scratch, h * row[0], &ends.f);
            for (j, &a) in row.iter().enumerate().skip(1) {
                // Most tableaux are sparse (rk4 has one entry per row); zeros cost a full pass.
                if a != 0.0 {
                    axpy(&mut self.scratch, h * a, &done[j - 1]);
                }
            }
            let t_stage = ends.t + tableau.c()[i] * h;
            check_finite(t_stage, &self.scratch, Quantity::State)?;
            eval_rhs(sys, t_stage, &self.scratch, &mut rest[0], stats)?;
        }
        Ok(())
    }

    /// `out = base + h Σ_j w_j k_j` with stage 1's derivative `f`; `base = None` means zero.
    /// The same summation order as [`RkStages::compute`], so that a "first same as last"
    /// tableau's last stage state and the new solution agree to the bit.
    pub fn combine(&self, weights: &[f64], f: &[f64], h: f64, base: Option<&[f64]>, out: &mut [f64]) {
        match base {
            Some(base) => out.copy_from_slice(base),
            None => out.fill(0.0),
        }
        axpy(out, h * weights[0], f);
        for (j, &w) in weights.iter().enumerate().skip(1) {
            if w != 0.0 {
                axpy(out, h * w, &self.k[j - 1]);
            }
        }
    }

    /// The derivative of stage `j + 2` (stage 1's is the caller's `f(t, x)`).
    pub fn k(&self, j: usize) -> &[f64] {
        &self.k[j]
    }

    /// The derivative of the last stage (for "first same as last" tableaux, `f` at the new
    /// point).
    pub fn last_mut(&mut self) -> &mut Vec<f64> {
        self.k
            .last_mut()
            .expect("first-same-as-last tableaux have at least two stages")
    }
}

/// Time keeping with a fixed step: step ends are `t_base + n·h` from the time the clock was
/// first started, computed rather than accumulated so that rounding does not drift. A step that
/// would pass the limit (an event, a breaking point, the end) is shortened to end exactly on it,
/// and the steps after it return to the grid: a restart after an event keeps `t_base`, so a run
/// with events has the step ends of the same run without them, plus the event instants. That is
/// what a fixed step means to a user who reads the results at `t_base + n·h` (the step `DT` of
/// system-dynamics tools): each such row is the method's own iterate, not an interpolation.
#[derive(Debug, Default)]
pub(crate) struct FixedClock {
    pub h: f64,
    t_base: f64,
    /// The grid point at or just before the current time is `t_base + n·h`.
    n: u64,
    /// Whether `t_base` is set: the first (re)start after [`FixedClock::new`] sets it.
    anchored: bool,
}

/// The next fixed step.
pub(crate) struct FixedStep {
    pub h: f64,
    pub t_new: f64,
    /// The step has the regular size `h` (up to rounding), so equidistant history stays valid.
    pub full: bool,
}

impl FixedClock {
    /// A clock with step `h`, whose grid starts at its first (re)start.
    pub fn new(h: f64) -> FixedClock {
        FixedClock {
            h,
            ..FixedClock::default()
        }
    }

    /// The clock of a method with both modes: one with the step `options.step` (checked, see
    /// [`Options::fixed_step`]) when a step is given, `None` when the method controls its step
    /// size.
    pub fn if_step_given(options: &Options, method: &str) -> Result<Option<FixedClock>, IntegrationError> {
        match options.step {
            Some(_) => Ok(Some(FixedClock::new(options.fixed_step(method)?))),
            None => Ok(None),
        }
    }

    /// Relative slack for the rounding in `t_base + n·h`: a time within it of a grid point is
    /// on the grid, so that no step of 1e-16 is left behind.
    fn slack(&self) -> f64 {
        1e-8 * self.h
    }

    /// Continues from `t`: the first call sets the grid's origin, later ones (after an event)
    /// find the grid point at or just before `t`.
    pub fn restart(&mut self, t: f64) {
        if !self.anchored || t < self.t_base {
            self.t_base = t;
            self.n = 0;
            self.anchored = true;
            return;
        }
        // The grid point at or before `t`, counting one within rounding of `t` as reached.
        let steps = ((t - self.t_base + self.slack()) / self.h).floor();
        self.n = if steps.is_finite() && steps > 0.0 {
            steps as u64
        } else {
            0
        };
    }

    /// The next grid point after the current one.
    fn next_grid(&self) -> f64 {
        self.t_base + (self.n + 1) as f64 * self.h
    }

    /// The step from `t` (the current time) towards `t_limit`: to the next grid point, or to
    /// the limit when that comes first.
    pub fn next(&self, t: f64, t_limit: f64) -> FixedStep {
        let slack = self.slack();
        let grid = self.next_grid();
        // Only a step from a grid point can have the regular size.
        let on_grid = (t - (grid - self.h)).abs() <= slack;
        let t_new = if t_limit <= grid + slack { t_limit } else { grid };
        let h = t_new - t;
        FixedStep {
            h,
            t_new,
            full: on_grid && (h - self.h).abs() <= slack,
        }
    }

    /// Ends fixed step `step`: the clock advances and `(t_new, x_new, f_new)` becomes the
    /// current point of `ends` (the buffers are swapped in).
    pub fn finish(
        &mut self,
        step: &FixedStep,
        ends: &mut StepEnds,
        x_new: &mut Vec<f64>,
        f_new: &mut Vec<f64>,
        stats: &mut Stats,
    ) -> StepInfo {
        self.advance(step);
        ends.accept(step.t_new, x_new, f_new, stats)
    }

    /// Restarts `ends` and the clock at `(t, x)`.
    pub fn restart_at(&mut self, ends: &mut StepEnds, t: f64, x: &[f64]) -> Result<(), IntegrationError> {
        ends.restart(t, x)?;
        self.restart(t);
        Ok(())
    }

    /// Records the step just taken: a step that reached the next grid point moves the clock
    /// there; one that stopped short of it (at a limit) leaves it.
    pub fn advance(&mut self, step: &FixedStep) {
        if (step.t_new - self.next_grid()).abs() <= self.slack() {
            self.n += 1;
        }
    }
}

/// A fixed-step explicit Runge–Kutta stepper for any tableau.
#[derive(Debug)]
pub struct ExplicitRk {
    tableau: Tableau,
    options: Options,
    fsal: bool,
    clock: FixedClock,
    ends: StepEnds,
    stages: RkStages,
    x_new: Vec<f64>,
    f_new: Vec<f64>,
    stats: Stats,
}

impl ExplicitRk {
    /// A stepper for `tableau` with the step size `options.step` (checked by `initialize`).
    pub fn new(tableau: Tableau, options: Options) -> Self {
        ExplicitRk {
            fsal: tableau.is_fsal(),
            tableau,
            options,
            clock: FixedClock::default(),
            ends: StepEnds::default(),
            stages: RkStages::default(),
            x_new: Vec::new(),
            f_new: Vec::new(),
            stats: Stats::default(),
        }
    }
}

impl Stepper for ExplicitRk {
    fn name(&self) -> &str {
        self.tableau.name()
    }

    fn initialize(&mut self, sys: &mut dyn OdeSystem, t0: f64, x0: &[f64]) -> Result<(), IntegrationError> {
        self.clock = FixedClock::new(self.options.fixed_step(self.tableau.name())?);
        let dim = sys.dim();
        self.ends.reset(dim, &mut self.stats);
        self.stages.resize(self.tableau.stages(), dim);
        zeroed(dim, [&mut self.x_new, &mut self.f_new]);
        self.restart(t0, x0)
    }

    fn step(&mut self, sys: &mut dyn OdeSystem, t_limit: f64) -> Result<StepInfo, IntegrationError> {
        let t = self.ends.t;
        self.ends
            .begin_step(sys, t_limit, &mut self.stats, self.options.max_steps)?;
        let step = self.clock.next(t, t_limit);
        self.stages
            .compute(&self.tableau, sys, &self.ends, step.h, &mut self.stats)?;
        let (ends, stages) = (&self.ends, &self.stages);
        stages.combine(self.tableau.b(), &ends.f, step.h, Some(&ends.x), &mut self.x_new);
        check_finite(step.t_new, &self.x_new, Quantity::State)?;
        if self.fsal {
            std::mem::swap(&mut self.f_new, self.stages.last_mut());
        } else {
            eval_rhs(sys, step.t_new, &self.x_new, &mut self.f_new, &mut self.stats)?;
        }
        Ok(self
            .clock
            .finish(&step, &mut self.ends, &mut self.x_new, &mut self.f_new, &mut self.stats))
    }

    fn restart(&mut self, t: f64, x: &[f64]) -> Result<(), IntegrationError> {
        self.clock.restart_at(&mut self.ends, t, x)
    }

    step_accessors!(ends with hermite);
}

/// `y += alpha · x`.
pub(crate) fn axpy(y: &mut [f64], alpha: f64, x: &[f64]) {
    for (yi, xi) in y.iter_mut().zip(x) {
        *yi += alpha * xi;
    }
}
