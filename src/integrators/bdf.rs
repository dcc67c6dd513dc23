//! BDF: variable-order (1 to 5), variable-step backward differentiation formulas for stiff
//! problems, in the quasi-constant step size form of Shampine and Reichelt's NDFs (the scheme of
//! MATLAB's `ode15s` and SciPy's `BDF`).
//!
//! Input: [`Options`] (`rtol`, `atol`, optional first and maximum step). Output: accepted steps
//! with dense output from the interpolating polynomial of the backward differences.
//!
//! The solution is kept as modified divided differences `D[0..=order+2]` at equal spacing `h`;
//! a step size change rescales them (`change_differences`), so the formulas stay those of a
//! constant step. Each step predicts with the polynomial, then solves the corrector
//! `(I − c J) Δ = c f(y) − ψ − d` by simplified Newton with a difference-quotient Jacobian and its
//! LU factors, which are kept across steps and rebuilt only when Newton converges too slowly
//! (first the factors for a new `c`, then a fresh Jacobian). The local error is estimated from
//! the corrector's total correction; the order is raised or lowered after `order + 1` steps at
//! one step size, choosing the order whose error estimate allows the largest next step.
//!
//! Deliberately not here: a symbolic or JIT Jacobian (the system interface only evaluates
//! `f`), sparse LU, and stiffness detection (`auto` does that).

use super::{
    IntegrationError, OdeSystem, Options, Stats, StepInfo, Stepper, check_finite, eval_rhs, initial_step, jacobian_at,
};
use nalgebra::{DMatrix, DVector};

const MAX_ORDER: usize = 5;
const NEWTON_MAX_ITERATIONS: usize = 4;
const MIN_FACTOR: f64 = 0.2;
const MAX_FACTOR: f64 = 10.0;
/// The NDF modification of each order (`κ`); order 5 is the plain BDF.
const KAPPA: [f64; MAX_ORDER + 1] = [0.0, -0.1850, -1.0 / 9.0, -0.0823, -0.0415, 0.0];

/// `γ_k = Σ_{j=1..k} 1/j`.
fn gamma(k: usize) -> f64 {
    (1..=k).map(|j| 1.0 / j as f64).sum()
}

fn alpha(k: usize) -> f64 {
    (1.0 - KAPPA[k]) * gamma(k)
}

fn error_constant(k: usize) -> f64 {
    KAPPA[k] * gamma(k) + 1.0 / (k as f64 + 1.0)
}

/// The matrix that rescales the differences of order `order` for a step size ratio `factor`.
fn rescaling(order: usize, factor: f64) -> DMatrix<f64> {
    let mut m = DMatrix::zeros(order + 1, order + 1);
    for j in 0..=order {
        m[(0, j)] = 1.0;
    }
    for i in 1..=order {
        for j in 1..=order {
            m[(i, j)] = (i as f64 - 1.0 - factor * j as f64) / i as f64;
        }
    }
    // Cumulative products down the columns.
    for i in 1..=order {
        for j in 0..=order {
            m[(i, j)] *= m[(i - 1, j)];
        }
    }
    m
}

/// A converged corrector: the Newton iterations it took, the new solution and its total
/// correction from the prediction.
type Corrected = (usize, Vec<f64>, Vec<f64>);

/// A BDF stepper.
#[derive(Debug)]
pub struct Bdf {
    options: Options,
    atol: Vec<f64>,
    /// The differences, one row per order (`MAX_ORDER + 3` rows).
    d: DMatrix<f64>,
    order: usize,
    h: f64,
    t: f64,
    t_prev: f64,
    equal_steps: usize,
    jacobian: Option<DMatrix<f64>>,
    /// Whether the Jacobian was built at the current step (a fresh one cannot help more).
    jacobian_current: bool,
    lu: Option<(f64, nalgebra::LU<f64, nalgebra::Dyn, nalgebra::Dyn>)>,
    /// The state at `t` (row 0 of `d`, kept as a slice for `state()`).
    x: Vec<f64>,
    /// A (re)start has not evaluated `f` and chosen the first step yet.
    needs_start: bool,
    stats: Stats,
    work: Vec<f64>,
    f: Vec<f64>,
}

impl Bdf {
    pub fn new(options: Options) -> Self {
        Bdf {
            options,
            atol: Vec::new(),
            d: DMatrix::zeros(0, 0),
            order: 1,
            h: 0.0,
            t: 0.0,
            t_prev: 0.0,
            equal_steps: 0,
            jacobian: None,
            jacobian_current: false,
            lu: None,
            x: Vec::new(),
            needs_start: true,
            stats: Stats::default(),
            work: Vec::new(),
            f: Vec::new(),
        }
    }

    fn n(&self) -> usize {
        self.x.len()
    }

    /// Root mean square of `v / scale`.
    fn norm(v: impl Iterator<Item = f64>, n: usize) -> f64 {
        (v.map(|x| x * x).sum::<f64>() / n.max(1) as f64).sqrt()
    }

    /// Rescales the differences of the current order for the step size ratio `factor`.
    fn change_differences(&mut self, factor: f64) {
        let order = self.order;
        let r = rescaling(order, factor);
        let u = rescaling(order, 1.0);
        let ru = (r * u).transpose();
        let rows = self.d.rows(0, order + 1).into_owned();
        let new_rows = ru * rows;
        self.d.rows_mut(0, order + 1).copy_from(&new_rows);
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
        self.d = DMatrix::zeros(MAX_ORDER + 3, n);
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

    /// Factors `I − c J` unless the factors for this `c` are at hand; false when singular.
    fn factor(&mut self, c: f64) -> bool {
        if matches!(&self.lu, Some((lu_c, _)) if *lu_c == c) {
            return true;
        }
        let Some(j) = &self.jacobian else { return false };
        let n = j.nrows();
        let lu = (DMatrix::identity(n, n) - j * c).lu();
        self.stats.factorizations += 1;
        if !lu.is_invertible() {
            self.lu = None;
            return false;
        }
        self.lu = Some((c, lu));
        true
    }

    /// Simplified Newton on the corrector from the prediction; `Some((iterations, y, d))` when
    /// it converged.
    #[allow(clippy::too_many_arguments)]
    fn newton(
        &mut self,
        sys: &mut dyn OdeSystem,
        t_new: f64,
        predicted: &[f64],
        c: f64,
        psi: &[f64],
        scale: &[f64],
        tolerance: f64,
    ) -> Result<Option<Corrected>, IntegrationError> {
        let n = self.n();
        let mut y = predicted.to_vec();
        let mut d = vec![0.0; n];
        let mut f = vec![0.0; n];
        let mut previous: Option<f64> = None;
        for k in 0..NEWTON_MAX_ITERATIONS {
            if check_finite(t_new, &y, super::Quantity::State).is_err() {
                return Ok(None);
            }
            match eval_rhs(sys, t_new, &y, &mut f, &mut self.stats) {
                Ok(()) => {}
                Err(e) if e.is_recoverable() => return Ok(None),
                Err(e) => return Err(e),
            }
            let mut dy = DVector::from_iterator(n, (0..n).map(|i| c * f[i] - psi[i] - d[i]));
            let Some((_, lu)) = &self.lu else { return Ok(None) };
            if !lu.solve_mut(&mut dy) {
                return Ok(None);
            }
            let size = Bdf::norm((0..n).map(|i| dy[i] / scale[i]), n);
            let rate = previous.map(|p| size / p);
            if let Some(rate) = rate
                && (rate >= 1.0 || rate.powi((NEWTON_MAX_ITERATIONS - k) as i32) / (1.0 - rate) * size > tolerance)
            {
                return Ok(None);
            }
            for i in 0..n {
                y[i] += dy[i];
                d[i] += dy[i];
            }
            if size == 0.0 || rate.is_some_and(|rate| rate / (1.0 - rate) * size < tolerance) {
                return Ok(Some((k + 1, y, d)));
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
        let norm = j
            .row_iter()
            .map(|r| r.iter().map(|v| v.abs()).sum::<f64>())
            .fold(0.0, f64::max);
        self.h * norm
    }
}

impl Stepper for Bdf {
    fn name(&self) -> &str {
        "bdf"
    }

    fn initialize(&mut self, sys: &mut dyn OdeSystem, t0: f64, x0: &[f64]) -> Result<(), IntegrationError> {
        let n = sys.dim();
        self.atol = self.options.atol_per_component(n)?;
        if self.options.max_steps == 0 {
            return Err(IntegrationError::InvalidInput {
                message: "the maximum number of steps must be at least 1".to_string(),
            });
        }
        self.stats = Stats::default();
        self.x = vec![0.0; n];
        self.work = vec![0.0; n];
        self.f = vec![0.0; n];
        self.jacobian = None;
        self.restart(t0, x0)
    }

    fn step(&mut self, sys: &mut dyn OdeSystem, t_limit: f64) -> Result<StepInfo, IntegrationError> {
        if t_limit.is_nan() || t_limit <= self.t {
            return Err(IntegrationError::InvalidInput {
                message: format!("the step limit {t_limit} is not after the current time {}", self.t),
            });
        }
        if self.needs_start {
            self.start(sys, t_limit)?;
        }
        let n = self.n();
        let rtol = self.options.rtol;
        let newton_tolerance = (10.0 * f64::EPSILON / rtol.max(f64::EPSILON)).max(0.03f64.min(rtol.sqrt()));
        let max_step = self.options.max_step.unwrap_or(f64::INFINITY);
        let min_step = 10.0 * (self.t.abs() * f64::EPSILON).max(f64::MIN_POSITIVE);
        if self.h > max_step {
            let factor = max_step / self.h;
            self.change_differences(factor);
            self.h = max_step;
            self.equal_steps = 0;
        }
        loop {
            if self.stats.steps + self.stats.rejected >= self.options.max_steps {
                return Err(IntegrationError::TooManySteps {
                    time: self.t,
                    max_steps: self.options.max_steps,
                });
            }
            if self.h < min_step {
                return Err(IntegrationError::StepSizeUnderflow {
                    time: self.t,
                    step: self.h,
                });
            }
            let mut t_new = self.t + self.h;
            if t_new >= t_limit || t_limit - t_new < min_step {
                t_new = t_limit;
                let factor = (t_new - self.t) / self.h;
                self.change_differences(factor);
                self.h = t_new - self.t;
                self.equal_steps = 0;
                self.lu = None;
            }
            let order = self.order;
            let predicted: Vec<f64> = (0..n).map(|i| (0..=order).map(|k| self.d[(k, i)]).sum()).collect();
            let scale: Vec<f64> = (0..n).map(|i| self.atol[i] + rtol * predicted[i].abs()).collect();
            let a = alpha(order);
            let psi: Vec<f64> = (0..n)
                .map(|i| (1..=order).map(|k| self.d[(k, i)] * gamma(k)).sum::<f64>() / a)
                .collect();
            let c = self.h / a;
            let mut solved = None;
            loop {
                if self.jacobian.is_none() {
                    let mut j = DMatrix::zeros(n, n);
                    let mut f0 = vec![0.0; n];
                    eval_rhs(sys, t_new, &predicted, &mut f0, &mut self.stats)?;
                    let floor = |i: usize| self.atol[i] + rtol * predicted[i].abs();
                    jacobian_at(
                        sys,
                        t_new,
                        &predicted,
                        &f0,
                        &floor,
                        &mut self.work,
                        &mut j,
                        &mut self.stats,
                    )?;
                    self.jacobian = Some(j);
                    self.jacobian_current = true;
                    self.lu = None;
                }
                if self.factor(c)
                    && let Some(result) = self.newton(sys, t_new, &predicted, c, &psi, &scale, newton_tolerance)?
                {
                    solved = Some(result);
                    break;
                }
                if self.jacobian_current {
                    break;
                }
                // Slow convergence with an old Jacobian: a fresh one at the prediction.
                self.jacobian = None;
            }
            let Some((iterations, y, d)) = solved else {
                self.stats.rejected += 1;
                self.change_differences(0.5);
                self.h *= 0.5;
                self.equal_steps = 0;
                self.lu = None;
                continue;
            };
            let safety = 0.9 * (2 * NEWTON_MAX_ITERATIONS + 1) as f64 / (2 * NEWTON_MAX_ITERATIONS + iterations) as f64;
            let scale: Vec<f64> = (0..n).map(|i| self.atol[i] + rtol * y[i].abs()).collect();
            let error_norm = Bdf::norm((0..n).map(|i| error_constant(order) * d[i] / scale[i]), n);
            if error_norm > 1.0 {
                self.stats.rejected += 1;
                let factor = MIN_FACTOR.max(safety * error_norm.powf(-1.0 / (order as f64 + 1.0)));
                self.change_differences(factor);
                self.h *= factor;
                self.equal_steps = 0;
                continue;
            }
            // Accepted: update the differences.
            self.stats.steps += 1;
            self.equal_steps += 1;
            self.t_prev = self.t;
            self.t = t_new;
            self.jacobian_current = false;
            for (i, &di) in d.iter().enumerate() {
                self.d[(order + 2, i)] = di - self.d[(order + 1, i)];
                self.d[(order + 1, i)] = di;
            }
            for k in (0..=order).rev() {
                for i in 0..n {
                    self.d[(k, i)] += self.d[(k + 1, i)];
                }
            }
            self.x.copy_from_slice(&y);
            let info = StepInfo {
                t_prev: self.t_prev,
                t: self.t,
            };
            if self.equal_steps < order + 1 {
                return Ok(info);
            }
            let norm_of =
                |row: usize, k: usize| Bdf::norm((0..n).map(|i| error_constant(k) * self.d[(row, i)] / scale[i]), n);
            let error_lower = if order > 1 {
                norm_of(order, order - 1)
            } else {
                f64::INFINITY
            };
            let error_higher = if order < MAX_ORDER {
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
            self.order = (order + best).saturating_sub(1).clamp(1, MAX_ORDER);
            let factor = MAX_FACTOR.min(safety * largest);
            self.change_differences(factor);
            self.h *= factor;
            self.equal_steps = 0;
            self.lu = None;
            return Ok(info);
        }
    }

    fn interpolate(&self, t: f64, out: &mut [f64]) {
        let n = self.n();
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
        super::check_restart(t, x, self.x.len())?;
        self.t = t;
        self.t_prev = t;
        self.x.copy_from_slice(x);
        self.needs_start = true;
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
        self.stats
    }
}
