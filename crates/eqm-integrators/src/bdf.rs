//! BDF: variable-order (1 to 5), variable-step backward differentiation formulas for stiff
//! problems, in the quasi-constant step size form of Shampine and Reichelt's NDFs (the scheme of
//! MATLAB's `ode15s` and SciPy's `BDF`).
//!
//! Input: [`Options`] (`rtol`, `atol`, optional first and maximum step, or a fixed `step`), and
//! the highest order ([`Bdf::with_order`]; 5 for [`Bdf::new`]). Output: accepted steps with
//! dense output from the interpolating polynomial of the backward differences.
//!
//! The solution is kept as modified divided differences `D[0..=order+2]` at equal spacing `h`;
//! a step size change rescales them (`change_differences`), so the formulas stay those of a
//! constant step. Each step predicts with the polynomial, then solves the corrector
//! `(I − c J) Δ = c f(y) − ψ − d` by simplified Newton with a difference-quotient Jacobian and its
//! LU factors, which are kept across steps and rebuilt only when needed: the factors while `c`
//! (the step size over the order's `α`) stays within 30 % of the `c` they were made for (CVODE's
//! rule; each Newton correction is then scaled by `2/(1 + c/c_LU)`, which removes most of the
//! mismatch in the stiff components), and when Newton's iteration fails or converges too
//! slowly, first the factors for the exact `c`, then a fresh Jacobian. A step therefore
//! factors only after a large change of step size or order, and allocates nothing. Newton stops at a tenth of the error
//! tolerance, judged with an estimate of its contraction rate that is carried from step to step
//! with the same factors and may fall by at most a factor 0.3 per measured rate (as CVODE's
//! does), so that most steps take one iteration, but a lucky small ratio of two corrections
//! does not pass an unconverged iterate (and its error estimate). The local error is estimated from
//! the corrector's total correction; the order is raised or lowered after `order + 1` steps at
//! one step size, choosing the order whose error estimate allows the largest next step, and the
//! step size changes then only when the order does or when the estimate asks for a factor of at
//! least 2 or at most 0.9 (the rest of the time a change would cost more than it gains). After
//! each step, entries of the differences and the state below 1e-280 times the smallest absolute
//! tolerance become zero, so that slow subnormal arithmetic does not spread (see `flush`).
//!
//! With a fixed step (`Options::step` is `Some(h)`) the stepper takes steps of size `h` at the
//! fixed order `k` of [`Bdf::with_order`] (5 for [`Bdf::new`]): the same NDF formulas (order 5 is
//! the plain BDF), with no error estimate, no rejection and no order change, and Newton's iteration
//! run to a tight tolerance (corrections below 1e-8 of the error weights, or ten times their
//! rounding). A multistep formula of order `k` needs the solution at `k + 1` equidistant points,
//! and their errors propagate into the global error; so the first `k` steps (at the start, after a
//! restart, and after a step shortened to meet a time limit, which breaks the grid) are taken by
//! Radau IIA of order 5 with the same fixed step (split into `h/m` substeps when Newton's iteration
//! does not converge at `h`), which keeps the global error O(h^k). The differences are then built
//! from those points. A BDF step whose Newton iteration does not converge fails with an
//! [`IntegrationError`]. This mode exists to measure the convergence order; its starter and the
//! grid of its points are in `bdf/starter.rs`.
//!
//! The Jacobian is the system's own when it has one (a model's symbolic Jacobian, see
//! [`OdeSystem::jacobian`]), else forward differences; a system that gives its Jacobian's
//! pattern gets a sparse Jacobian and sparse LU when [`linalg::prefers_sparse`] estimates that
//! cheaper ([`linalg`]). Deliberately not here: stiffness detection (`auto` does that).

use crate::control::{
    check_step_limit, eval_iterate, fixed_step_newton_tolerance, initial_step, min_step, newton_converged,
    newton_fails, newton_safety, rms,
};
use crate::error::IntegrationError;
use crate::explicit::FixedClock;
use crate::jacobian::{JacobianPoint, PatternCache, build_jacobian};
use crate::linalg;
use crate::options::Options;
use crate::stats::{Stats, check_budget};
use crate::stepper::{StepInfo, Stepper, check_restart};
use crate::system::{OdeSystem, eval_rhs};
use nalgebra::DMatrix;
use starter::{Fixed, add_work};

mod starter;

const MAX_ORDER: usize = 5;
const NEWTON_MAX_ITERATIONS: usize = 4;
/// Newton's iteration stops when its estimated remaining error is a tenth of the error
/// tolerance (in the weighted norm of the error test), as CVODE's does (its `NLSCOEF`). SciPy's
/// BDF stops at `min(0.03, √rtol)`, 1e-3 at rtol 1e-6: that made most steps take a second
/// iteration, and on the stiff test set cost 10 to 25 % more time for no smaller error.
const NEWTON_TOLERANCE: f64 = 0.1;
/// Newton iterations per attempt in the fixed-step mode: its tolerance is far tighter, and a
/// step cannot be retried with a smaller size, so a slowly contracting iteration may continue.
const FIXED_NEWTON_MAX_ITERATIONS: usize = 50;
/// The most substeps the Radau starter splits one fixed step into before giving up.
const MAX_STARTER_SUBSTEPS: usize = 64;
/// How fast the estimate of Newton's contraction rate may fall (CVODE's `CRDOWN`): each measured
/// rate lowers it to at most this fraction of its previous value, and new factors (or a step
/// with another `c`) restart it at 1.
/// A single ratio of two corrections can be far below the true rate: with a Jacobian taken
/// before a sharp turn of the solution (Van der Pol's oscillator right after a jump), the first
/// correction removes a fast-contracting part of the error and the second is small, while the
/// part along the stale directions hardly moves. Trusted at once, such a ratio declared
/// iterates converged whose corrector residual was thousands of tolerances, their error
/// estimates (formed from the correction) were as wrong, and the step size grew tenfold a
/// step; at rtol 1e-4 the oscillator ended with an error of 1 instead of 8e-4.
const RATE_DECAY: f64 = 0.3;
const MIN_FACTOR: f64 = 0.2;
const MAX_FACTOR: f64 = 10.0;
/// The factors of `I − c_LU J` serve a step with `c` while `|c/c_LU − 1|` is at most this
/// (CVODE's `DGMAX`). With the scaled correction (see [`Bdf::newton`]) the iteration still
/// contracts by at most `|c/c_LU − 1|/(c/c_LU + 1)` < 0.15 per iteration in the stiff
/// components, so a step costs at most an iteration more, while a factorisation of a large
/// system costs as much as many iterations.
const REFACTOR_RATIO: f64 = 0.3;
/// The step size stays when the order stays and the factor the error estimates allow lies
/// strictly between these bounds. Each change of the step size costs accuracy and work: the
/// differences are rescaled by interpolation, the formulas of the next `order + 1` steps are
/// those of unequal steps, Newton's rate estimate (kept for one `c`) is lost, so the next step
/// takes at least two iterations, and a change beyond [`REFACTOR_RATIO`] refactors. A step size
/// that followed every small change of the estimates (a factor of 1.05 or 0.97 after each
/// `order + 1` steps) paid this for nothing: on the chain of 100 masses, an oscillatory problem
/// whose step size drifts slowly, the steps needed 1.8 evaluations of `f` each, with these
/// bounds about one, and at rtol 1e-6 the error at the end time fell from 1.1e-3 to 6e-4 for
/// 20 % fewer evaluations. Growing only by at least 2 keeps the step below what the
/// estimate allows by up to that factor, which the smaller error pays for; shrinking at 0.9
/// keeps the step within the error test, so that it is not rejected.
const KEEP_STEP: (f64, f64) = (0.9, 2.0);
/// The NDF modification of each order (`κ`); order 5 is the plain BDF.
pub(crate) const KAPPA: [f64; MAX_ORDER + 1] = [0.0, -0.1850, -1.0 / 9.0, -0.0823, -0.0415, 0.0];

/// `γ_k = Σ_{j=1..k} 1/j`, a table: it is read for every state in every step.
const GAMMA: [f64; MAX_ORDER + 2] = {
    let mut table = [0.0; MAX_ORDER + 2];
    let mut k = 1;
    while k < table.len() {
        table[k] = table[k - 1] + 1.0 / k as f64;
        k += 1;
    }
    table
};

fn alpha(k: usize) -> f64 {
    (1.0 - KAPPA[k]) * GAMMA[k]
}

fn error_constant(k: usize) -> f64 {
    KAPPA[k] * GAMMA[k] + 1.0 / (k as f64 + 1.0)
}

/// The rows of the differences `d`: the orders 0 to [`MAX_ORDER`] and the two above them that
/// the order's choice reads.
const DIFFERENCES: usize = MAX_ORDER + 3;

/// Values this many times below the smallest absolute tolerance are set to zero in the
/// differences and the state after each step (see [`flush`]).
const NEGLIGIBLE: f64 = 1e-280;

/// Adds the corrections of a step of order `K` to the differences `d` (a column of
/// [`DIFFERENCES`] rows per state): the new highest differences, then the lower orders in turn;
/// entries below `negligible` in magnitude become zero.
fn update_differences<const K: usize>(d: &mut [f64], corrections: &[f64], negligible: f64) {
    for (column, &di) in d.chunks_exact_mut(DIFFERENCES).zip(corrections) {
        column[K + 2] = di - column[K + 1];
        column[K + 1] = di;
        for k in (0..=K).rev() {
            column[k] += column[k + 1];
        }
        flush(&mut column[..K + 3], negligible);
    }
}

/// Sets the entries of `values` below `negligible` in magnitude to zero.
///
/// Where a disturbance travels along a long chain of states (a wave in a chain of masses, a
/// front in a discretised PDE), the implicit solve spreads every correction over all states,
/// geometrically smaller with the distance, so states far ahead hold values that pass through
/// the subnormal range, 1e-308 to 1e-324, on their way to zero; at a large step size the
/// spread decays slowly and thousands of states do. Arithmetic on subnormal numbers is many
/// times slower on common processors: on the chain of 1000 masses at rtol 1e-4 the steps took
/// five times as long as at rtol 1e-6, and with the flush two and a half times (the rest is in
/// the LU's solves, which spread each correction again). `negligible` is [`NEGLIGIBLE`] times the smallest
/// absolute tolerance, so the values set to zero are far below anything the error test sees,
/// and far too small to grow into anything a double can hold.
fn flush(values: &mut [f64], negligible: f64) {
    for v in values {
        if v.abs() < negligible {
            *v = 0.0;
        }
    }
}

/// A matrix of the size of the differences' orders, on the stack: rescaling runs at every
/// change of the step size, and for at most six rows a heap matrix and a general product cost
/// more than the arithmetic.
type OrderMatrix = [[f64; MAX_ORDER + 1]; MAX_ORDER + 1];

/// The matrix that rescales the differences of order `order` for a step size ratio `factor`
/// (entries beyond `order` are zero).
fn rescaling(order: usize, factor: f64) -> OrderMatrix {
    let mut m = [[0.0; MAX_ORDER + 1]; MAX_ORDER + 1];
    m[0][..=order].fill(1.0);
    for (i, row) in m.iter_mut().enumerate().take(order + 1).skip(1) {
        for (j, x) in row.iter_mut().enumerate().take(order + 1).skip(1) {
            *x = (i as f64 - 1.0 - factor * j as f64) / i as f64;
        }
    }
    // Cumulative products down the columns.
    for i in 1..=order {
        let (above, below) = m.split_at_mut(i);
        for (x, &y) in below[0][..=order].iter_mut().zip(&above[i - 1][..=order]) {
            *x *= y;
        }
    }
    m
}

/// The buffers of [`Bdf`]'s steps; see its `buffers` field.
#[derive(Debug, Default)]
struct StepBuffers {
    predicted: Vec<f64>,
    /// The reciprocals of the error weights `atol + rtol·|y|`: the norms multiply by them, as
    /// a division costs several multiplications and the norms run in every Newton iteration.
    inverse_scale: Vec<f64>,
    psi: Vec<f64>,
    y: Vec<f64>,
    d: Vec<f64>,
    f: Vec<f64>,
    dy: Vec<f64>,
}

/// A BDF stepper.
#[derive(Debug)]
pub struct Bdf {
    options: Options,
    /// The highest order of the adaptive mode, and the order of the fixed-step mode.
    max_order: usize,
    /// The fixed-step mode; `None` when the step size is controlled.
    fixed: Option<Fixed>,
    atol: Vec<f64>,
    /// The differences, one row per order ([`DIFFERENCES`] rows).
    d: DMatrix<f64>,
    order: usize,
    h: f64,
    t: f64,
    t_prev: f64,
    equal_steps: usize,
    /// [`NEGLIGIBLE`] times the smallest absolute tolerance (see [`flush`]).
    negligible: f64,
    jacobian: Option<linalg::Jacobian>,
    /// The sparse layout of the system's Jacobian, once known (see [`build_jacobian`]).
    pattern: PatternCache,
    /// Whether the Jacobian was built at the current step (a fresh one cannot help more).
    jacobian_current: bool,
    lu: Option<(f64, linalg::Factors)>,
    /// The estimate of the rate of convergence of Newton's iteration with the current factors:
    /// the largest of the measured ratios of successive corrections and [`RATE_DECAY`] times
    /// the previous estimate (1 for new factors).
    /// With it the first iteration of the next step can already be judged converged (as CVODE
    /// does): the iteration matrix is the same, so the rate is a good estimate, and most steps
    /// then need one evaluation of `f` and one solve instead of two. Cleared with the factors.
    newton_rate: Option<f64>,
    /// The `c` of the corrector `newton_rate` was measured for: with factors kept for another
    /// `c` the iteration contracts differently for each `c`, so the rate carries over only to
    /// steps with the same `c` (on Robertson's problem to t = 1e11, carrying it to any `c`
    /// accepted iterates too early and the error test rejected ten times as many steps).
    rate_c: f64,
    /// The state at `t` (row 0 of `d`, kept as a slice for `state()`).
    x: Vec<f64>,
    /// A (re)start has not evaluated `f` and chosen the first step yet.
    needs_start: bool,
    stats: Stats,
    work: Vec<f64>,
    /// Per-step buffers, kept so that a step allocates nothing: the prediction, the error
    /// weights, the history term of the corrector, and Newton's iterate, correction, derivative
    /// and increment.
    buffers: StepBuffers,
    f: Vec<f64>,
}

impl Bdf {
    /// A stepper of variable order up to 5, or of order 5 with a fixed step.
    pub fn new(options: Options) -> Self {
        Bdf::with_order(MAX_ORDER, options)
    }

    /// A stepper whose order is at most `order` (1 to 5): with a fixed step (`options.step`)
    /// every step has this order; without one, the order varies between 1 and `order`.
    /// Another `order` is refused by [`Stepper::initialize`].
    pub fn with_order(order: usize, options: Options) -> Self {
        Bdf {
            options,
            max_order: order,
            fixed: None,
            atol: Vec::new(),
            d: DMatrix::zeros(0, 0),
            order: 1,
            h: 0.0,
            t: 0.0,
            t_prev: 0.0,
            equal_steps: 0,
            negligible: 0.0,
            jacobian: None,
            pattern: None,
            jacobian_current: false,
            lu: None,
            newton_rate: None,
            rate_c: f64::NAN,
            x: Vec::new(),
            needs_start: true,
            stats: Stats::default(),
            work: Vec::new(),
            buffers: StepBuffers::default(),
            f: Vec::new(),
        }
    }

    fn n(&self) -> usize {
        self.x.len()
    }

    /// Rescales the differences of the current order for the step size ratio `factor`.
    fn change_differences(&mut self, factor: f64) {
        let order = self.order;
        let r = rescaling(order, factor);
        let u = rescaling(order, 1.0);
        // D[0..=order] ← (R U)ᵀ D[0..=order], state by state (a column of `d` holds one state's
        // differences contiguously).
        let mut ru = [[0.0; MAX_ORDER + 1]; MAX_ORDER + 1];
        for (i, row) in ru.iter_mut().enumerate().take(order + 1) {
            for (j, x) in row.iter_mut().enumerate().take(order + 1) {
                *x = (0..=order).map(|k| r[i][k] * u[k][j]).sum();
            }
        }
        let mut old = [0.0; MAX_ORDER + 1];
        for mut column in self.d.column_iter_mut() {
            old[..=order].copy_from_slice(&column.as_slice()[..=order]);
            for (j, x) in column.iter_mut().enumerate().take(order + 1) {
                *x = (0..=order).map(|k| ru[k][j] * old[k]).sum();
            }
        }
    }

    /// The first step after a (re)start: `f` at the point, a step size (Hairer's rule for
    /// order 1, as in the explicit methods), the differences of order 1.
    fn start(&mut self, sys: &mut dyn OdeSystem, t_limit: f64) -> Result<(), IntegrationError> {
        let n = self.n();
        eval_rhs(sys, self.t, &self.x, &mut self.f, &mut self.stats)?;
        let max_step = self.options.max_step.unwrap_or(f64::INFINITY);
        let h = match self.options.initial_step {
            Some(h) => h,
            None => initial_step(
                sys,
                self.t,
                &self.x,
                &self.f,
                &self.atol,
                self.options.rtol,
                1,
                &mut self.stats,
            )?,
        };
        self.h = h.min(max_step).min((t_limit - self.t).max(f64::MIN_POSITIVE));
        self.d = DMatrix::zeros(DIFFERENCES, n);
        for i in 0..n {
            self.d[(0, i)] = self.x[i];
            self.d[(1, i)] = self.f[i] * self.h;
        }
        self.order = 1;
        self.equal_steps = 0;
        self.lu = None;
        self.needs_start = false;
        Ok(())
    }

    /// Factors `I − c J` unless factors for a `c` within [`REFACTOR_RATIO`] of this one are at
    /// hand; false when singular.
    fn factor(&mut self, c: f64) -> bool {
        if matches!(&self.lu, Some((lu_c, _)) if (c / *lu_c - 1.0).abs() <= REFACTOR_RATIO) {
            return true;
        }
        let Some(j) = &self.jacobian else { return false };
        self.stats.factorizations += 1;
        self.newton_rate = None;
        let previous = self.lu.take().map(|(_, lu)| lu);
        match linalg::Factors::new(previous, j, c) {
            Some(lu) => {
                self.lu = Some((c, lu));
                true
            }
            None => {
                self.lu = None;
                false
            }
        }
    }

    /// Simplified Newton on the corrector from the prediction (`buffers.predicted`, with the
    /// history term `buffers.psi` and the weights `buffers.inverse_scale`), with at most
    /// `max_iterations` iterations; `Some(iterations)` when it converged, the solution and the
    /// correction then in `buffers.y` and `buffers.d`.
    ///
    /// With factors of `I − c_LU J` for a `c_LU` other than `c`, each correction is multiplied
    /// by `2/(1 + c/c_LU)` (as CVODE does): in a stiff component (`|c λ| ≫ 1`) the kept matrix
    /// gives `c/c_LU` times the Newton correction, in a non-stiff one the correction itself,
    /// and the factor splits the difference, so that both contract.
    fn newton(
        &mut self,
        sys: &mut dyn OdeSystem,
        t_new: f64,
        c: f64,
        tolerance: f64,
        max_iterations: usize,
    ) -> Result<Option<usize>, IntegrationError> {
        let n = self.n();
        let b = &mut self.buffers;
        b.y.clear();
        b.y.extend_from_slice(&b.predicted);
        // `f` and `dy` are overwritten before they are read; only the correction starts at zero.
        b.f.resize(n, 0.0);
        b.dy.resize(n, 0.0);
        b.d.clear();
        b.d.resize(n, 0.0);
        let mut previous: Option<f64> = None;
        let mut rate_estimate = self.newton_rate.filter(|_| self.rate_c == c).unwrap_or(1.0);
        for k in 0..max_iterations {
            let b = &mut self.buffers;
            if !eval_iterate(sys, t_new, &b.y, &mut b.f, &mut self.stats)? {
                return Ok(None);
            }
            for (((dy, f), psi), d) in b.dy.iter_mut().zip(&b.f).zip(&b.psi).zip(&b.d) {
                *dy = c * f - psi - d;
            }
            let Some((lu_c, lu)) = &mut self.lu else {
                return Ok(None);
            };
            if !lu.solve(&mut b.dy) {
                return Ok(None);
            }
            // The scaling of the correction and its weighted norm in one pass over the states.
            let scale = if *lu_c != c { 2.0 / (1.0 + c / *lu_c) } else { 1.0 };
            let mut squares = 0.0;
            for (dy, w) in b.dy.iter_mut().zip(&b.inverse_scale) {
                *dy *= scale;
                let weighted = *dy * w;
                squares += weighted * weighted;
            }
            let size = (squares / n.max(1) as f64).sqrt();
            let measured = previous.map(|p| size / p);
            if let Some(m) = measured {
                rate_estimate = (RATE_DECAY * rate_estimate).max(m);
                self.newton_rate = Some(rate_estimate);
                self.rate_c = c;
            }
            if let Some(rate) = measured
                && newton_fails(rate, size, max_iterations - k, tolerance)
            {
                return Ok(None);
            }
            for ((y, d), dy) in b.y.iter_mut().zip(b.d.iter_mut()).zip(&b.dy) {
                *y += dy;
                *d += dy;
            }
            // Converged by the rate estimate, which on the first iteration is the one carried
            // from earlier steps with the same `c` (1, so no convergence yet, without one);
            // divergence is judged on the rates measured in this step only.
            let rate = Some(rate_estimate).filter(|&r| r < 1.0);
            if newton_converged(size, rate, tolerance) {
                return Ok(Some(k + 1));
            }
            previous = Some(size);
        }
        Ok(None)
    }
}

impl Bdf {
    /// `h·|J|∞` with the kept Jacobian: below about 1 the problem is not stiff at this step
    /// size (an explicit method would be stable with it).
    pub(crate) fn stiffness(&self) -> f64 {
        let Some(j) = &self.jacobian else { return f64::INFINITY };
        self.h * j.norm_inf()
    }

    /// Rescales the differences and the step size by `factor`; the steps are no longer equal.
    fn rescale(&mut self, factor: f64) {
        self.change_differences(factor);
        self.h *= factor;
        self.equal_steps = 0;
    }

    /// The prediction of the next point from the differences of order `order` (`a` its
    /// `alpha`), the inverse error weights there, and `psi`, the part of the corrector's
    /// equation the differences give.
    fn predict(&mut self, order: usize, a: f64) {
        let (n, rtol) = (self.n(), self.options.rtol);
        let b = &mut self.buffers;
        for v in [&mut b.predicted, &mut b.inverse_scale, &mut b.psi] {
            v.resize(n, 0.0);
        }
        // The sums run over every order with the terms above `order` multiplied by zero: a
        // fixed length the compiler unrolls, and adding zeros changes no sum.
        let mut ones = [0.0; MAX_ORDER + 1];
        let mut weights = [0.0; MAX_ORDER + 1];
        for k in 0..=order {
            ones[k] = 1.0;
            weights[k] = if k == 0 { 0.0 } else { GAMMA[k] / a };
        }
        // Column i of `d` holds state i's differences, contiguously: one pass over the states
        // with slices, which a loop over indices into four vectors and a matrix is not.
        let states = self.d.as_slice().chunks_exact(DIFFERENCES);
        let outputs = b
            .predicted
            .iter_mut()
            .zip(b.inverse_scale.iter_mut())
            .zip(b.psi.iter_mut());
        for ((column, ((p, w), psi)), atol) in states.zip(outputs).zip(&self.atol) {
            let column = &column[..=MAX_ORDER];
            *p = column.iter().zip(&ones).map(|(d, one)| d * one).sum();
            *w = 1.0 / (atol + rtol * p.abs());
            *psi = column.iter().zip(&weights).map(|(d, g)| d * g).sum();
        }
    }

    /// Solves the corrector's equation at `t_new` with `c = h/α` by Newton's iteration,
    /// refactoring and then rebuilding the Jacobian while it fails; the iterations it took, or
    /// `None` when it failed with a fresh Jacobian.
    fn correct(
        &mut self,
        sys: &mut dyn OdeSystem,
        t_new: f64,
        c: f64,
        newton_tolerance: f64,
        max_iterations: usize,
    ) -> Result<Option<usize>, IntegrationError> {
        let rtol = self.options.rtol;
        let mut solved = None;
        loop {
            if self.jacobian.is_none() {
                // f at the prediction is only needed for difference quotients.
                let predicted = std::mem::take(&mut self.buffers.predicted);
                let floor = |i: usize| self.atol[i] + rtol * predicted[i].abs();
                let at = JacobianPoint {
                    t: t_new,
                    point: &predicted,
                    f_point: None,
                    floor: &floor,
                };
                let j = build_jacobian(sys, at, &mut self.work, &mut self.pattern, None, &mut self.stats);
                self.buffers.predicted = predicted;
                let j = j?;
                self.jacobian = Some(j);
                self.jacobian_current = true;
                self.lu = None;
            }
            if self.factor(c)
                && let Some(iterations) = self.newton(sys, t_new, c, newton_tolerance, max_iterations)?
            {
                solved = Some(iterations);
                break;
            }
            // Factors made for another `c`: first the factors for this one, with the same
            // Jacobian.
            if let Some((lu_c, _)) = &self.lu
                && *lu_c != c
            {
                self.lu = None;
                continue;
            }
            if self.jacobian_current {
                break;
            }
            // Slow convergence with an old Jacobian: a fresh one at the prediction.
            self.jacobian = None;
        }
        Ok(solved)
    }

    /// Accepts the corrected point at `t_new` and updates the differences of order `order`.
    fn accept(&mut self, t_new: f64, order: usize) -> StepInfo {
        self.stats.steps += 1;
        self.equal_steps += 1;
        self.t_prev = self.t;
        self.t = t_new;
        self.jacobian_current = false;
        let (d, corrections) = (self.d.as_mut_slice(), &self.buffers.d);
        let negligible = self.negligible;
        // One loop per order, so that the compiler unrolls each state's short recurrence.
        match order {
            1 => update_differences::<1>(d, corrections, negligible),
            2 => update_differences::<2>(d, corrections, negligible),
            3 => update_differences::<3>(d, corrections, negligible),
            4 => update_differences::<4>(d, corrections, negligible),
            _ => update_differences::<MAX_ORDER>(d, corrections, negligible),
        }
        // The corrected point becomes the state; the next Newton iteration starts its iterate
        // from the prediction, so the old state's storage can take its place.
        std::mem::swap(&mut self.x, &mut self.buffers.y);
        flush(&mut self.x, negligible);
        StepInfo {
            t_prev: self.t_prev,
            t: self.t,
        }
    }

    /// After `order + 1` equal steps: the order among `order − 1`, `order` and `order + 1`
    /// whose error estimate allows the largest step, and that step unless the order stays and
    /// the step's factor lies within [`KEEP_STEP`] (`error_norm` is the estimate of this order,
    /// `safety` the factor of Newton's convergence).
    fn choose_order(&mut self, order: usize, error_norm: f64, safety: f64) {
        let n = self.n();
        let inverse_scale = &self.buffers.inverse_scale;
        let norm_of = |row: usize, k: usize| {
            rms(
                (0..n).map(|i| error_constant(k) * self.d[(row, i)] * inverse_scale[i]),
                n,
            )
        };
        let error_lower = if order > 1 {
            norm_of(order, order - 1)
        } else {
            f64::INFINITY
        };
        let error_higher = if order < self.max_order {
            norm_of(order + 2, order + 1)
        } else {
            f64::INFINITY
        };
        let factors = [
            error_lower.powf(-1.0 / order as f64),
            error_norm.powf(-1.0 / (order as f64 + 1.0)),
            error_higher.powf(-1.0 / (order as f64 + 2.0)),
        ];
        let (best, &largest) = factors
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(b.1))
            .unwrap_or((1, &1.0));
        let new_order = (order + best).saturating_sub(1).clamp(1, self.max_order);
        let factor = MAX_FACTOR.min(safety * largest);
        if new_order == order && KEEP_STEP.0 < factor && factor < KEEP_STEP.1 {
            // The step size stays; the next choice is made `order + 1` steps later, so that
            // the three norms and powers are not computed at every step.
            self.equal_steps = 0;
            return;
        }
        self.order = new_order;
        self.rescale(factor);
    }
}

impl Stepper for Bdf {
    fn name(&self) -> &str {
        "bdf"
    }

    fn initialize(&mut self, sys: &mut dyn OdeSystem, t0: f64, x0: &[f64]) -> Result<(), IntegrationError> {
        let n = sys.dim();
        self.atol = self.options.atol_per_component(n)?;
        self.negligible = NEGLIGIBLE * self.atol.iter().copied().fold(f64::INFINITY, f64::min);
        if !(1..=MAX_ORDER).contains(&self.max_order) {
            return Err(IntegrationError::invalid(format!(
                "the order of bdf must be 1 to {MAX_ORDER}, not {}",
                self.max_order
            )));
        }
        self.fixed = FixedClock::if_step_given(&self.options, "bdf")?.map(Fixed::new);
        self.stats = Stats::default();
        self.x = vec![0.0; n];
        self.work = vec![0.0; n];
        self.f = vec![0.0; n];
        self.jacobian = None;
        self.restart(t0, x0)
    }

    fn step(&mut self, sys: &mut dyn OdeSystem, t_limit: f64) -> Result<StepInfo, IntegrationError> {
        check_step_limit(self.t, t_limit)?;
        // In the fixed-step mode: the step the clock asks for, which BDF takes once the
        // differences hold enough points of the grid, and the starter before that.
        let mut fixed_step = None;
        if let Some(fixed) = &self.fixed {
            let step = fixed.clock.next(self.t, t_limit);
            if !(step.full && fixed.ready) || self.needs_start {
                return self.starter_step(sys, &step);
            }
            fixed_step = Some(step);
        } else if self.needs_start {
            self.start(sys, t_limit)?;
        }
        let n = self.n();
        let rtol = self.options.rtol;
        let (newton_tolerance, max_iterations) = if fixed_step.is_some() {
            (fixed_step_newton_tolerance(rtol), FIXED_NEWTON_MAX_ITERATIONS)
        } else {
            (NEWTON_TOLERANCE, NEWTON_MAX_ITERATIONS)
        };
        let max_step = self.options.max_step.unwrap_or(f64::INFINITY);
        let min_step = min_step(self.t);
        if fixed_step.is_none() && self.h > max_step {
            let factor = max_step / self.h;
            self.change_differences(factor);
            self.h = max_step;
            self.equal_steps = 0;
        }
        loop {
            check_budget(self.t, &self.stats, self.options.max_steps)?;
            if self.h < min_step {
                return Err(IntegrationError::StepSizeUnderflow {
                    time: self.t,
                    step: self.h,
                });
            }
            let mut t_new = self.t + self.h;
            if let Some(step) = &fixed_step {
                // A full step of the clock: its end differs from t + h only by rounding.
                t_new = step.t_new;
            } else if t_new >= t_limit || t_limit - t_new < min_step {
                t_new = t_limit;
                let factor = (t_new - self.t) / self.h;
                self.change_differences(factor);
                self.h = t_new - self.t;
                self.equal_steps = 0;
            }
            let order = self.order;
            let a = alpha(order);
            self.predict(order, a);
            let c = self.h / a;
            let solved = self.correct(sys, t_new, c, newton_tolerance, max_iterations)?;
            let Some(iterations) = solved else {
                if fixed_step.is_some() {
                    // A smaller step would break the grid the differences live on.
                    return Err(IntegrationError::Rhs {
                        time: self.t,
                        message: format!(
                            "the bdf step of size {} did not converge (Newton's iteration); try a smaller --step",
                            self.h
                        ),
                    });
                }
                self.stats.rejected += 1;
                self.rescale(0.5);
                continue;
            };
            let safety = newton_safety(NEWTON_MAX_ITERATIONS, iterations);
            // The error weights at the corrected point, kept for the order's choice, and the
            // error estimate, in one pass.
            let constant = error_constant(order);
            let mut squares = 0.0;
            let b = &mut self.buffers;
            for (((w, y), d), atol) in b.inverse_scale.iter_mut().zip(&b.y).zip(&b.d).zip(&self.atol) {
                *w = 1.0 / (atol + rtol * y.abs());
                let weighted = constant * d * *w;
                squares += weighted * weighted;
            }
            let error_norm = (squares / n.max(1) as f64).sqrt();
            if fixed_step.is_none() && error_norm > 1.0 {
                self.stats.rejected += 1;
                let factor = MIN_FACTOR.max(safety * error_norm.powf(-1.0 / (order as f64 + 1.0)));
                self.rescale(factor);
                continue;
            }
            let info = self.accept(t_new, order);
            if let (Some(fixed), Some(step)) = (&mut self.fixed, &fixed_step) {
                fixed.clock.advance(step);
                fixed.dense.clear();
                return Ok(info);
            }
            if self.equal_steps < order + 1 {
                return Ok(info);
            }
            self.choose_order(order, error_norm, safety);
            return Ok(info);
        }
    }

    fn interpolate(&self, t: f64, out: &mut [f64]) {
        let n = self.n();
        if let Some(fixed) = &self.fixed
            && let Some(first) = fixed.dense.first()
            && !self.needs_start
        {
            // The starter took the last step: the polynomial of the substep containing `t`.
            let segment = fixed.dense.iter().rev().find(|d| d.t_old() <= t).unwrap_or(first);
            segment.at(t, out);
            return;
        }
        if self.needs_start || self.d.nrows() == 0 {
            out.copy_from_slice(&self.x);
            return;
        }
        // The polynomial through the differences at spacing h ending at `self.t`.
        for (i, o) in out.iter_mut().enumerate().take(n) {
            *o = self.d[(0, i)];
        }
        let mut product = 1.0;
        for k in 1..=self.order {
            product *= (t - (self.t - (k as f64 - 1.0) * self.h)) / (k as f64 * self.h);
            for (i, o) in out.iter_mut().enumerate().take(n) {
                *o += self.d[(k, i)] * product;
            }
        }
    }

    fn restart(&mut self, t: f64, x: &[f64]) -> Result<(), IntegrationError> {
        check_restart(t, x, self.x.len())?;
        self.t = t;
        self.t_prev = t;
        self.x.copy_from_slice(x);
        self.needs_start = true;
        if let Some(fixed) = &mut self.fixed {
            fixed.clock.restart(t);
            fixed.ready = false;
            fixed.grid.clear();
            fixed.dense.clear();
        }
        // After an event the equations may differ: the Jacobian is rebuilt.
        self.jacobian = None;
        self.lu = None;
        Ok(())
    }

    fn state(&self) -> &[f64] {
        &self.x
    }

    fn time(&self) -> f64 {
        self.t
    }

    fn stats(&self) -> Stats {
        let mut stats = self.stats;
        if let Some(fixed) = &self.fixed {
            // The starter's substeps are part of the stepper's steps; its work counts.
            add_work(&mut stats, fixed.retired);
            if let Some(starter) = &fixed.starter {
                add_work(&mut stats, starter.stats());
            }
        }
        stats
    }
}
