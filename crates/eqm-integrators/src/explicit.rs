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
use crate::stats::Stats;
use crate::stepper::{StepEnds, StepInfo, Stepper, step_accessors, zeroed};
use crate::system::{OdeSystem, eval_rhs};
use crate::tableau::Tableau;

/// The stage derivatives of one explicit Runge–Kutta step, preallocated in one flat buffer.
#[derive(Debug, Default)]
pub(crate) struct RkStages {
    /// The derivatives of stages 2, 3, ...: stage `j + 2`'s at `k[j·dim..(j+1)·dim]`. Stage 1's
    /// derivative is `f(t, x)` of the step's start, which the caller already holds.
    k: Vec<f64>,
    dim: usize,
    /// The state of the stage being evaluated; afterwards it holds the state of the last stage
    /// evaluated into it (see [`RkStages::compute_into`]).
    pub scratch: Vec<f64>,
}

impl RkStages {
    /// Sizes the buffers for `stages` stages (those of the tableau and any extra stages of an
    /// interpolant) and `dim` states.
    pub fn resize(&mut self, stages: usize, dim: usize) {
        self.dim = dim;
        self.k.clear();
        self.k.resize(stages.saturating_sub(1) * dim, 0.0);
        zeroed(dim, [&mut self.scratch]);
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
        self.compute_into(tableau, sys, ends, h, stats, None)
    }

    /// [`RkStages::compute`], with the last stage's state and derivative written to `last`
    /// instead of the buffers when it is given (for a "first same as last" tableau they are the
    /// new point and its derivative). The state of every other stage passes through
    /// `scratch`, which then holds that of the last stage but one.
    pub fn compute_into(
        &mut self,
        tableau: &Tableau,
        sys: &mut dyn OdeSystem,
        ends: &StepEnds,
        h: f64,
        stats: &mut Stats,
        mut last: Option<(&mut [f64], &mut [f64])>,
    ) -> Result<(), IntegrationError> {
        let (s, dim) = (tableau.stages(), self.dim);
        for i in 1..s {
            let (done, rest) = self.k.split_at_mut((i - 1) * dim);
            let stage = |j: usize| {
                if j == 0 {
                    &ends.f[..]
                } else {
                    &done[(j - 1) * dim..j * dim]
                }
            };
            let t_stage = ends.t + tableau.c()[i] * h;
            let (state, derivative) = match (i == s - 1, last.as_mut()) {
                (true, Some((x, f))) => (&mut **x, &mut **f),
                _ => (&mut self.scratch[..], &mut rest[..dim]),
            };
            if !combination(state, Some(&ends.x), weighted(tableau.a_row(i), h), stage) {
                check_finite(t_stage, state, Quantity::State)?;
            }
            eval_rhs(sys, t_stage, state, derivative, stats)?;
        }
        Ok(())
    }

    /// `out = base + h Σ_j w_j k_j` with stage 1's derivative `f`; `base = None` means zero.
    /// The same summation order as [`RkStages::compute`], so that a "first same as last"
    /// tableau's last stage state and the new solution agree to the bit.
    pub fn combine(&self, weights: &[f64], f: &[f64], h: f64, base: Option<&[f64]>, out: &mut [f64]) {
        combination(
            out,
            base,
            weighted(weights, h),
            |j| if j == 0 { f } else { self.k(j - 1) },
        );
    }

    /// The derivative of stage `j + 2` (stage 1's is the caller's `f(t, x)`).
    pub fn k(&self, j: usize) -> &[f64] {
        &self.k[j * self.dim..(j + 1) * self.dim]
    }

    /// The derivatives of stages `first + 2`, ...: the first for writing, the rest before it
    /// for reading (stage `j + 2`'s at `[j·dim..]` of the second).
    pub fn split_at_stage(&mut self, first: usize) -> (&mut [f64], &[f64]) {
        let (done, rest) = self.k.split_at_mut(first * self.dim);
        (&mut rest[..self.dim], done)
    }

    /// Exchanges the stage derivatives with `other` (of the same size): the adaptive stepper
    /// keeps those of its last accepted step for dense output while it tries the next.
    pub fn swap_derivatives(&mut self, other: &mut Vec<f64>) {
        std::mem::swap(&mut self.k, other);
    }

    /// The derivatives of stages 2, 3, ... in one buffer (stage `j + 2`'s at `[j·dim..]`).
    pub fn derivatives(&self) -> &[f64] {
        &self.k
    }

    /// The length of the derivatives' buffer, for sizing a second one like it.
    pub fn derivatives_len(&self) -> usize {
        self.k.len()
    }
}

/// The non-zero weights of `w` times `h`, as terms `(coefficient, stage)` for [`combination`].
pub(crate) fn weighted(w: &[f64], h: f64) -> impl Iterator<Item = (f64, usize)> + '_ {
    w.iter()
        .enumerate()
        .filter(|(_, w)| **w != 0.0)
        .map(move |(j, w)| (h * w, j))
}

/// The most terms one pass over the vectors sums: eight streams and the output fit the
/// registers, and a row of a tableau rarely has more non-zero entries.
pub(crate) const FUSED: usize = 8;

/// `out = base + Σ_t c_t · stage(j_t)` over `terms` `(c_t, j_t)` (`base = None` means zero),
/// summed left to right, in one pass over the vectors per eight terms. Returns whether every
/// value written is finite, so that callers check finiteness only to name the culprit.
pub(crate) fn combination<'a>(
    out: &mut [f64],
    base: Option<&[f64]>,
    terms: impl Iterator<Item = (f64, usize)>,
    stage: impl Fn(usize) -> &'a [f64],
) -> bool {
    let start = match base {
        Some(base) => Start::From(base),
        None => Start::Zero,
    };
    let (start, last) = leading_passes(out, start, terms, &stage);
    fused(out, start, last.terms(), &stage)
}

/// The last pass of a sum: up to [`FUSED`] terms (none when the sum has none).
pub(crate) struct LastPass {
    chunk: [(f64, usize); FUSED],
    filled: usize,
}

impl LastPass {
    pub(crate) fn terms(&self) -> &[(f64, usize)] {
        &self.chunk[..self.filled]
    }
}

/// Sums `terms` into `out` from `start` in passes of [`FUSED`] terms, all but the last pass,
/// which is returned with where it starts (`Start::Out` after a pass, else `start`), so that
/// the caller can fuse more work into it.
pub(crate) fn leading_passes<'a, 'b>(
    out: &mut [f64],
    mut start: Start<'b>,
    terms: impl Iterator<Item = (f64, usize)>,
    stage: &impl Fn(usize) -> &'a [f64],
) -> (Start<'b>, LastPass) {
    let mut last = LastPass {
        chunk: [(0.0, 0); FUSED],
        filled: 0,
    };
    for term in terms {
        if last.filled == FUSED {
            fused(out, start, &last.chunk, stage);
            start = Start::Out;
            last.filled = 0;
        }
        last.chunk[last.filled] = term;
        last.filled += 1;
    }
    (start, last)
}

/// Evaluates `$body` with `$c: [f64; N]` and `$k: [&[f64]; N]`, the coefficients and the
/// stages (by `$stage`) of the terms `$terms` (at most [`FUSED`] of them), for `N` their number:
/// the loops of `$body` then have a constant trip count over the terms and are unrolled.
macro_rules! with_terms {
    ($terms:expr, $stage:expr, |$c:ident, $k:ident| $body:expr) => {
        with_terms!(@arms $terms, $stage, $c, $k, $body; 0 1 2 3 4 5 6 7 8)
    };
    (@arms $terms:expr, $stage:expr, $c:ident, $k:ident, $body:expr; $($n:literal)*) => {{
        let terms: &[(f64, usize)] = $terms;
        match terms.len() {
            $($n => {
                let $c: [f64; $n] = std::array::from_fn(|t| terms[t].0);
                let $k: [&[f64]; $n] = std::array::from_fn(|t| $stage(terms[t].1));
                $body
            })*
            _ => unreachable!("at most FUSED terms per pass"),
        }
    }};
}
pub(crate) use with_terms;

/// Where a fused pass starts its sums.
#[derive(Clone, Copy)]
pub(crate) enum Start<'a> {
    From(&'a [f64]),
    Zero,
    /// The output's own values (a continuing sum).
    Out,
}

/// One pass `out = start + Σ terms` for up to [`FUSED`] terms; whether all values are finite.
pub(crate) fn fused<'a>(
    out: &mut [f64],
    start: Start<'_>,
    terms: &[(f64, usize)],
    stage: &impl Fn(usize) -> &'a [f64],
) -> bool {
    with_terms!(terms, stage, |c, k| pass(out, start, c, k))
}

/// The loop of [`fused`] for `N` terms. Every slice is cut to the output's length first, so the
/// compiler drops the bounds checks and vectorises the loop; the finiteness test is an `and` of
/// comparisons, which vectorises too.
#[inline(always)]
fn pass<const N: usize>(out: &mut [f64], start: Start<'_>, c: [f64; N], k: [&[f64]; N]) -> bool {
    let n = out.len();
    let k: [&[f64]; N] = k.map(|v| &v[..n]);
    let mut finite = true;
    match start {
        Start::From(base) => {
            let base = &base[..n];
            for i in 0..n {
                let mut acc = base[i];
                for t in 0..N {
                    acc += c[t] * k[t][i];
                }
                finite &= acc.is_finite();
                out[i] = acc;
            }
        }
        Start::Zero => {
            for i in 0..n {
                let mut acc = 0.0;
                for t in 0..N {
                    acc += c[t] * k[t][i];
                }
                finite &= acc.is_finite();
                out[i] = acc;
            }
        }
        Start::Out => {
            for i in 0..n {
                let mut acc = out[i];
                for t in 0..N {
                    acc += c[t] * k[t][i];
                }
                finite &= acc.is_finite();
                out[i] = acc;
            }
        }
    }
    finite
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
            // The last stage was evaluated at the new point.
            self.f_new.copy_from_slice(self.stages.k(self.tableau.stages() - 2));
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
