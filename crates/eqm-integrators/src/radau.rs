//! Radau IIA of order 5 (three stages), the method of Hairer and Wanner's RADAU5, for stiff
//! problems.
//!
//! Input: [`Options`] (`rtol`, `atol`, optional first and maximum step, or a fixed `step`).
//! Output: accepted steps with the collocation polynomial as dense output.
//!
//! Each step solves the collocation system for the stage increments `Z` by simplified Newton. The
//! 3n × 3n iteration matrix is decoupled by the eigenvectors of the method's matrix into one real
//! system `(μ/h − J)` and one complex one `(μ_c/h − J)`, each factored once ([`linalg::Factors`])
//! and kept while the step size and Jacobian do not change. Both are factored dense, or, when the
//! system gives its Jacobian's pattern and [`linalg::prefers_sparse`] estimates it cheaper, by
//! faer's sparse LU on that pattern (plus the diagonal): the real and the complex factors share
//! the pattern's ordering and symbolic analysis, and refactoring reuses their storage. The
//! Jacobian (difference quotients scaled by the error weights) is kept across steps and rebuilt
//! only when Newton converged slowly. The error estimate is RADAU5's (filtered through the real
//! factorisation, refined once after a rejection), the step size follows Gustafsson's predictive
//! controller, and steps that would change `h` by less than 20% keep it, so the factorisations
//! can be reused. The Newton iteration starts from the previous step's collocation polynomial.
//!
//! With a fixed step (`Options::step` is `Some(h)`) every step has size `h` (the last one shorter
//! when it lands on the time limit), there is no error estimate and no rejection, and Newton's
//! iteration runs to a tight tolerance (corrections below 1e-8 of the error weights, or ten times
//! their rounding), so that the global error is the method's own: order 5 on smooth non-stiff
//! problems, and the stage order 3 in the stiff limit (the order reduction seen on Prothero and
//! Robinson's problem). A step whose Newton iteration does not converge even with a fresh Jacobian
//! fails with an [`IntegrationError`] asking for a smaller step. This mode exists to measure the
//! convergence order and to start BDF's fixed-step mode.
//!
//! The Jacobian is the system's own when it has one (a model's symbolic Jacobian), else forward
//! differences (by colour of the pattern's columns for a sparse one). Deliberately not here: the
//! variable-order RADAU, and iterative (Krylov) solves of the stage systems.

use crate::control::{
    check_step_limit, eval_iterate, fixed_step_newton_tolerance, initial_step, min_step, newton_converged,
    newton_fails, newton_safety, rms, trial_step,
};
use crate::error::{IntegrationError, Quantity, check_finite};
use crate::explicit::{FixedClock, FixedStep};
use crate::jacobian::{JacobianPoint, PatternCache, build_jacobian};
use crate::linalg;
use crate::options::Options;
use crate::stats::{Stats, check_budget};
use crate::stepper::{StepInfo, Stepper, check_restart, step_accessors};
use crate::system::{OdeSystem, eval_rhs};
use nalgebra::{Complex, DVector};

const NEWTON_MAX_ITERATIONS: usize = 6;
/// Newton iterations per attempt in the fixed-step mode: its tolerance is far tighter, and a
/// step cannot be retried with a smaller size, so a slowly contracting iteration may continue.
const FIXED_NEWTON_MAX_ITERATIONS: usize = 50;
const MIN_FACTOR: f64 = 0.2;
const MAX_FACTOR: f64 = 10.0;

fn sqrt6() -> f64 {
    6f64.sqrt()
}

/// The collocation nodes.
fn nodes() -> [f64; 3] {
    [(4.0 - sqrt6()) / 10.0, (4.0 + sqrt6()) / 10.0, 1.0]
}

/// The weights of the embedded error estimate.
fn error_weights() -> [f64; 3] {
    [(-13.0 - 7.0 * sqrt6()) / 3.0, (-13.0 + 7.0 * sqrt6()) / 3.0, -1.0 / 3.0]
}

/// The real eigenvalue of the inverse of the method's matrix, and the complex one.
fn mu_real() -> f64 {
    3.0 + 3f64.powf(2.0 / 3.0) - 3f64.powf(1.0 / 3.0)
}

fn mu_complex() -> Complex<f64> {
    Complex::new(
        3.0 + 0.5 * (3f64.powf(1.0 / 3.0) - 3f64.powf(2.0 / 3.0)),
        -0.5 * (3f64.powf(5.0 / 6.0) + 3f64.powf(7.0 / 6.0)),
    )
}

/// The eigenvector matrix `T` of the method's matrix and its inverse (to more digits than an
/// f64 holds, as published).
#[allow(clippy::excessive_precision)]
const T: [[f64; 3]; 3] = [
    [
        0.094_438_762_488_975_24,
        -0.141_255_295_020_954_21,
        0.030_029_194_105_147_42,
    ],
    [
        0.250_213_122_965_333_32,
        0.204_129_352_293_799_94,
        -0.382_942_112_757_261_92,
    ],
    [1.0, 1.0, 0.0],
];
#[allow(clippy::excessive_precision)]
const TI: [[f64; 3]; 3] = [
    [
        4.178_718_591_551_904_28,
        0.327_682_820_761_062_37,
        0.523_376_445_499_449_51,
    ],
    [
        -4.178_718_591_551_904_28,
        -0.327_682_820_761_062_37,
        0.476_623_554_500_550_44,
    ],
    [
        0.502_872_634_945_786_82,
        -2.571_926_949_855_605_22,
        0.596_039_204_828_224_92,
    ],
];

/// The coefficients of the collocation polynomial in powers of `(t − t_old)/h` from `Z`.
fn dense_coefficients() -> [[f64; 3]; 3] {
    let s6 = sqrt6();
    [
        [
            13.0 / 3.0 + 7.0 * s6 / 3.0,
            -23.0 / 3.0 - 22.0 * s6 / 3.0,
            10.0 / 3.0 + 5.0 * s6,
        ],
        [
            13.0 / 3.0 - 7.0 * s6 / 3.0,
            -23.0 / 3.0 + 22.0 * s6 / 3.0,
            10.0 / 3.0 - 5.0 * s6,
        ],
        [1.0 / 3.0, -8.0 / 3.0, 10.0 / 3.0],
    ]
}

type RealFactors = linalg::Factors<f64>;
type ComplexFactors = linalg::Factors<Complex<f64>>;

/// The last accepted step's collocation polynomial.
#[derive(Debug, Clone)]
pub(crate) struct Dense {
    t_old: f64,
    h: f64,
    y_old: Vec<f64>,
    /// `q[k][i]`: the coefficient of `x^(k+1)` for component `i`.
    q: [Vec<f64>; 3],
}

impl Dense {
    /// The time the step started at.
    pub(crate) fn t_old(&self) -> f64 {
        self.t_old
    }

    /// The polynomial's value at `t`.
    pub(crate) fn at(&self, t: f64, out: &mut [f64]) {
        let x = (t - self.t_old) / self.h;
        let (x1, x2, x3) = (x, x * x, x * x * x);
        for (i, o) in out.iter_mut().enumerate() {
            *o = self.y_old[i] + self.q[0][i] * x1 + self.q[1][i] * x2 + self.q[2][i] * x3;
        }
    }
}

/// A Radau IIA (order 5) stepper.
#[derive(Debug)]
pub struct Radau {
    options: Options,
    atol: Vec<f64>,
    t: f64,
    x: Vec<f64>,
    f: Vec<f64>,
    h: f64,
    h_old: Option<f64>,
    error_old: Option<f64>,
    /// The Jacobian: dense, or sparse on the system's pattern (see [`build_jacobian`]).
    jacobian: Option<linalg::Jacobian>,
    /// The sparse layout of the system's Jacobian, once known (see [`build_jacobian`]).
    pattern: PatternCache,
    jacobian_current: bool,
    /// The factors of `μ/h − J` and `μ_c/h − J`. They are kept after they stop applying (a new
    /// `h` or Jacobian), so that the next factorisation reuses their storage.
    factors: Option<(RealFactors, ComplexFactors)>,
    /// The step size `factors` belong to, for the current Jacobian; `None` when they do not
    /// apply.
    factored_h: Option<f64>,
    dense: Option<Dense>,
    needs_start: bool,
    work: Vec<f64>,
    stats: Stats,
    /// The clock of the fixed-step mode; `None` when the step size is controlled.
    clock: Option<FixedClock>,
    buffers: StepBuffers,
}

/// The vectors of a step, kept from step to step so that a step allocates nothing: Newton's
/// starting point `z0` and iterate `z` (the stage increments), the transformed increments `w`,
/// the stage derivatives `f`, a stage point, the two linear systems' right-hand sides, the
/// error weights, the new point, and the error estimate.
#[derive(Debug, Default)]
struct StepBuffers {
    z0: [Vec<f64>; 3],
    z: [Vec<f64>; 3],
    w: [Vec<f64>; 3],
    f: [Vec<f64>; 3],
    point: Vec<f64>,
    dw_real: Vec<f64>,
    dw_complex: Vec<Complex<f64>>,
    scale: Vec<f64>,
    y_new: Vec<f64>,
    ze: Vec<f64>,
    error: Vec<f64>,
}

impl StepBuffers {
    fn resize(&mut self, n: usize) {
        for v in self
            .z0
            .iter_mut()
            .chain(&mut self.z)
            .chain(&mut self.w)
            .chain(&mut self.f)
        {
            v.resize(n, 0.0);
        }
        for v in [
            &mut self.point,
            &mut self.dw_real,
            &mut self.scale,
            &mut self.y_new,
            &mut self.ze,
            &mut self.error,
        ] {
            v.resize(n, 0.0);
        }
        self.dw_complex.resize(n, Complex::new(0.0, 0.0));
    }
}

/// A converged Newton iteration (the stage increments are in the buffers' `z`): its
/// iterations and last contraction rate.
struct Collocation {
    iterations: usize,
    rate: Option<f64>,
}

impl Radau {
    pub fn new(options: Options) -> Self {
        Radau {
            options,
            atol: Vec::new(),
            t: 0.0,
            x: Vec::new(),
            f: Vec::new(),
            h: 0.0,
            h_old: None,
            error_old: None,
            jacobian: None,
            pattern: None,
            jacobian_current: false,
            factors: None,
            factored_h: None,
            dense: None,
            needs_start: true,
            work: Vec::new(),
            stats: Stats::default(),
            clock: None,
            buffers: StepBuffers::default(),
        }
    }

    /// The collocation polynomial of the last accepted step (none right after a (re)start).
    pub(crate) fn dense(&self) -> Option<&Dense> {
        if self.needs_start { None } else { self.dense.as_ref() }
    }

    /// Rebuilds the Jacobian at the current point (the previous one's storage is reused when
    /// both are dense); its factors no longer apply. On failure no Jacobian is kept.
    fn build_jacobian(&mut self, sys: &mut dyn OdeSystem) -> Result<(), IntegrationError> {
        self.factored_h = None;
        let previous = self.jacobian.take();
        let (atol, rtol, x) = (&self.atol, self.options.rtol, &self.x);
        let floor = |i: usize| atol[i] + rtol * x[i].abs();
        let at = JacobianPoint {
            t: self.t,
            point: x,
            f_point: Some(&self.f),
            floor: &floor,
        };
        let jacobian = build_jacobian(sys, at, &mut self.work, &mut self.pattern, previous, &mut self.stats)?;
        self.jacobian = Some(jacobian);
        self.jacobian_current = true;
        Ok(())
    }

    /// Forgets the Jacobian and its factors (their storage is kept for the next ones).
    fn forget_jacobian(&mut self) {
        self.jacobian = None;
        self.factored_h = None;
    }

    /// Factors `μ/h − J` and `μ_c/h − J` for step `h` unless at hand; false when singular.
    fn factor(&mut self, h: f64) -> bool {
        if self.factored_h == Some(h) {
            return true;
        }
        self.factored_h = None;
        let Some(j) = &self.jacobian else { return false };
        // The previous factors' storage is reused (dense ones, or sparse ones of this pattern).
        let (real, complex) = match self.factors.take() {
            Some((real, complex)) => (Some(real), Some(complex)),
            None => (None, None),
        };
        let (m_real, m_complex) = (mu_real() / h, mu_complex() / h);
        self.stats.factorizations += 2;
        let Some(real) = RealFactors::shifted(real, j, m_real, 1.0) else {
            return false;
        };
        let Some(complex) = ComplexFactors::shifted(complex, j, m_complex, 1.0) else {
            return false;
        };
        self.factors = Some((real, complex));
        self.factored_h = Some(h);
        true
    }

    /// Simplified Newton on the collocation system of the step of size `h` from the buffers'
    /// `z0` with their error weights `scale`, with at most `max_iterations` iterations; the
    /// solution is left in the buffers' `z`.
    fn newton(
        &mut self,
        sys: &mut dyn OdeSystem,
        h: f64,
        tolerance: f64,
        max_iterations: usize,
    ) -> Result<Option<Collocation>, IntegrationError> {
        let n = self.x.len();
        let c = nodes();
        let m_real = mu_real() / h;
        let m_complex = mu_complex() / h;
        let b = &mut self.buffers;
        // W = TI · Z (row-wise over the three stages).
        for (r, wr) in b.w.iter_mut().enumerate() {
            for (i, x) in wr.iter_mut().enumerate() {
                *x = TI[r][0] * b.z0[0][i] + TI[r][1] * b.z0[1][i] + TI[r][2] * b.z0[2][i];
            }
        }
        for (z, z0) in b.z.iter_mut().zip(&b.z0) {
            z.copy_from_slice(z0);
        }
        let mut previous: Option<f64> = None;
        let mut rate = None;
        for k in 0..max_iterations {
            let b = &mut self.buffers;
            for ((z, f), node) in b.z.iter().zip(&mut b.f).zip(c) {
                for ((p, x), dz) in b.point.iter_mut().zip(&self.x).zip(z) {
                    *p = x + dz;
                }
                if !eval_iterate(sys, self.t + node * h, &b.point, f, &mut self.stats)? {
                    return Ok(None);
                }
            }
            let (Some(_), Some((real, complex))) = (self.factored_h, &mut self.factors) else {
                return Ok(None);
            };
            let (f, w) = (&b.f, &b.w);
            for i in 0..n {
                b.dw_real[i] = TI[0][0] * f[0][i] + TI[0][1] * f[1][i] + TI[0][2] * f[2][i] - m_real * w[0][i];
                let re = TI[1][0] * f[0][i] + TI[1][1] * f[1][i] + TI[1][2] * f[2][i];
                let im = TI[2][0] * f[0][i] + TI[2][1] * f[1][i] + TI[2][2] * f[2][i];
                b.dw_complex[i] = Complex::new(re, im) - m_complex * Complex::new(w[1][i], w[2][i]);
            }
            if !real.solve(&mut b.dw_real) || !complex.solve(&mut b.dw_complex) {
                return Ok(None);
            }
            let (dw_real, dw_complex, scale) = (&b.dw_real, &b.dw_complex, &b.scale);
            let size = rms(
                (0..n).flat_map(|i| {
                    [
                        dw_real[i] / scale[i],
                        dw_complex[i].re / scale[i],
                        dw_complex[i].im / scale[i],
                    ]
                }),
                3 * n,
            );
            if let Some(p) = previous {
                rate = Some(size / p);
            }
            if let Some(r) = rate
                && newton_fails(r, size, max_iterations - k, tolerance)
            {
                return Ok(None);
            }
            for i in 0..n {
                b.w[0][i] += b.dw_real[i];
                b.w[1][i] += b.dw_complex[i].re;
                b.w[2][i] += b.dw_complex[i].im;
            }
            for (r, zr) in b.z.iter_mut().enumerate() {
                for (i, x) in zr.iter_mut().enumerate() {
                    *x = T[r][0] * b.w[0][i] + T[r][1] * b.w[1][i] + T[r][2] * b.w[2][i];
                }
            }
            if newton_converged(size, rate, tolerance) {
                return Ok(Some(Collocation {
                    iterations: k + 1,
                    rate,
                }));
            }
            previous = Some(size);
        }
        Ok(None)
    }

    /// Newton's starting point for a step of size `h`, into the buffers' `z0`: the previous
    /// step's collocation polynomial extrapolated to the new nodes (zero increments after a
    /// (re)start); and the error weights at the current point into their `scale`.
    fn prepare_step(&mut self, h: f64) {
        let c = nodes();
        let b = &mut self.buffers;
        for (s, z0) in b.z0.iter_mut().enumerate() {
            match &self.dense {
                Some(d) => {
                    d.at(self.t + c[s] * h, z0);
                    for (z, x) in z0.iter_mut().zip(&self.x) {
                        *z -= x;
                    }
                }
                None => z0.fill(0.0),
            }
        }
        let rtol = self.options.rtol;
        for ((w, a), x) in b.scale.iter_mut().zip(&self.atol).zip(&self.x) {
            *w = a + rtol * x.abs();
        }
    }

    /// Stores the collocation polynomial of the step of size `h` from the current point with
    /// the stage increments in the buffers' `z`, in the storage of the previous one.
    fn store_collocation_polynomial(&mut self, h: f64) {
        let p = dense_coefficients();
        let z = &self.buffers.z;
        let dense = self.dense.get_or_insert_with(|| Dense {
            t_old: 0.0,
            h: 0.0,
            y_old: Vec::new(),
            q: Default::default(),
        });
        dense.t_old = self.t;
        dense.h = h;
        dense.y_old.clone_from(&self.x);
        for (k, q) in dense.q.iter_mut().enumerate() {
            q.clear();
            q.extend((0..self.x.len()).map(|i| z[0][i] * p[0][k] + z[1][i] * p[1][k] + z[2][i] * p[2][k]));
        }
    }

    /// One step of the fixed-step mode (see the module documentation): size `step.h`, or the
    /// nominal `h` for a full step, so that the factorisations stay valid from step to step
    /// (the clock's end time differs from `t + h` only by rounding).
    fn fixed_step(&mut self, sys: &mut dyn OdeSystem, step: &FixedStep, h: f64) -> Result<StepInfo, IntegrationError> {
        check_budget(self.t, &self.stats, self.options.max_steps)?;
        if self.needs_start {
            eval_rhs(sys, self.t, &self.x, &mut self.f, &mut self.stats)?;
            self.needs_start = false;
        }
        let n = self.x.len();
        let h = if step.full { h } else { step.h };
        let rtol = self.options.rtol;
        let tolerance = fixed_step_newton_tolerance(rtol);
        self.prepare_step(h);
        if self.jacobian.is_none() {
            self.build_jacobian(sys)?;
        }
        loop {
            if self.factor(h) && self.newton(sys, h, tolerance, FIXED_NEWTON_MAX_ITERATIONS)?.is_some() {
                break;
            }
            if self.jacobian_current {
                // A fresh Jacobian did not help either: with a fixed step there is nothing
                // left to try (a smaller step would no longer be the step asked for).
                return Err(IntegrationError::Rhs {
                    time: self.t,
                    message: format!(
                        "the radau5 step of size {h} did not converge (Newton's iteration); try a smaller --step"
                    ),
                });
            }
            self.build_jacobian(sys)?;
        }
        let y_new: Vec<f64> = (0..n).map(|i| self.x[i] + self.buffers.z[2][i]).collect();
        check_finite(step.t_new, &y_new, Quantity::State)?;
        // f at the new point is what the next Jacobian, if one is needed, is built with. It is
        // evaluated before anything changes, so that a failure leaves the last accepted step.
        let mut f_new = vec![0.0; n];
        eval_rhs(sys, step.t_new, &y_new, &mut f_new, &mut self.stats)?;
        self.store_collocation_polynomial(h);
        let t_prev = self.t;
        self.t = step.t_new;
        self.x = y_new;
        self.f = f_new;
        self.jacobian_current = false;
        self.stats.steps += 1;
        if let Some(clock) = &mut self.clock {
            clock.advance(step);
        }
        Ok(StepInfo { t_prev, t: self.t })
    }

    /// Solves the stage equations of a step of size `h` by Newton's iteration, with a fresh
    /// Jacobian when the kept one fails; `None` when it fails with a fresh one too.
    fn solve_stages(
        &mut self,
        sys: &mut dyn OdeSystem,
        h: f64,
        tolerance: f64,
    ) -> Result<Option<Collocation>, IntegrationError> {
        let mut solved = None;
        loop {
            if self.factor(h)
                && let Some(s) = self.newton(sys, h, tolerance, NEWTON_MAX_ITERATIONS)?
            {
                solved = Some(s);
                break;
            }
            if self.jacobian_current {
                break;
            }
            self.build_jacobian(sys)?;
        }
        Ok(solved)
    }

    /// The norm of the embedded error estimate of the solved step of size `h` (RADAU5's,
    /// filtered by the real factors, and once more after a rejection); `None` when no real
    /// factors of this step are at hand.
    fn estimate_error(
        &mut self,
        sys: &mut dyn OdeSystem,
        h: f64,
        rejected: bool,
    ) -> Result<Option<f64>, IntegrationError> {
        let (n, rtol) = (self.x.len(), self.options.rtol);
        let b = &mut self.buffers;
        let z = &b.z;
        let e = error_weights();
        for (i, x) in self.x.iter().enumerate() {
            b.y_new[i] = x + z[2][i];
            b.ze[i] = (e[0] * z[0][i] + e[1] * z[1][i] + e[2] * z[2][i]) / h;
            b.scale[i] = self.atol[i] + rtol * x.abs().max(b.y_new[i].abs());
            b.error[i] = self.f[i] + b.ze[i];
        }
        let (Some(_), Some((real, _))) = (self.factored_h, &mut self.factors) else {
            return Ok(None);
        };
        real.solve(&mut b.error);
        let (error, ze, scale) = (&b.error, &b.ze, &b.scale);
        let mut error_norm = rms((0..n).map(|i| error[i] / scale[i]), n);
        if rejected && error_norm > 1.0 {
            // RADAU5's refinement after a rejection: one more filtering with f at y + error.
            let probe: Vec<f64> = (0..n).map(|i| self.x[i] + error[i]).collect();
            let mut f_probe = vec![0.0; n];
            eval_rhs(sys, self.t, &probe, &mut f_probe, &mut self.stats)?;
            let mut refined = DVector::from_iterator(n, (0..n).map(|i| f_probe[i] + ze[i]));
            real.solve(refined.as_mut_slice());
            error_norm = rms((0..n).map(|i| refined[i] / scale[i]), n);
        }
        Ok(Some(error_norm))
    }

    /// Gustafsson's predictive step size factor.
    fn predict_factor(&self, h: f64, error: f64) -> f64 {
        let multiplier = match (self.h_old, self.error_old) {
            (Some(h_old), Some(e_old)) if error > 0.0 => h / h_old * (e_old / error).powf(0.25),
            _ => 1.0,
        };
        multiplier.min(1.0) * error.powf(-0.25)
    }
}

impl Stepper for Radau {
    fn name(&self) -> &str {
        "radau5"
    }

    fn initialize(&mut self, sys: &mut dyn OdeSystem, t0: f64, x0: &[f64]) -> Result<(), IntegrationError> {
        let n = sys.dim();
        self.atol = self.options.atol_per_component(n)?;
        self.clock = FixedClock::if_step_given(&self.options, "radau5")?;
        self.stats = Stats::default();
        self.x = vec![0.0; n];
        self.f = vec![0.0; n];
        self.work = vec![0.0; n];
        self.buffers.resize(n);
        self.forget_jacobian();
        // Another system may have another pattern (or none).
        self.pattern = None;
        self.factors = None;
        self.restart(t0, x0)
    }

    fn step(&mut self, sys: &mut dyn OdeSystem, t_limit: f64) -> Result<StepInfo, IntegrationError> {
        check_step_limit(self.t, t_limit)?;
        if let Some(clock) = &self.clock {
            let (step, h) = (clock.next(self.t, t_limit), clock.h);
            return self.fixed_step(sys, &step, h);
        }
        let rtol = self.options.rtol;
        let max_step = self.options.max_step.unwrap_or(f64::INFINITY);
        if self.needs_start {
            eval_rhs(sys, self.t, &self.x, &mut self.f, &mut self.stats)?;
            self.h = match self.options.initial_step {
                Some(h) => h,
                None => initial_step(sys, self.t, &self.x, &self.f, &self.atol, rtol, 3, &mut self.stats)?,
            };
            self.h_old = None;
            self.error_old = None;
            self.needs_start = false;
        }
        let tolerance = (10.0 * f64::EPSILON / rtol.max(f64::EPSILON)).max(0.03f64.min(rtol.sqrt()));
        let min_step = min_step(self.t);
        let mut h = self.h.min(max_step);
        if h < self.h {
            self.h_old = None;
            self.error_old = None;
        }
        let mut rejected = false;
        loop {
            check_budget(self.t, &self.stats, self.options.max_steps)?;
            if h < min_step {
                return Err(IntegrationError::StepSizeUnderflow { time: self.t, step: h });
            }
            // The size is the distance to the end as computed, which rounding can make differ
            // from the `h` asked for; the factorisations and the dense output use this one.
            let (_, t_new) = trial_step(self.t, h, t_limit, min_step);
            h = t_new - self.t;
            self.prepare_step(h);
            if self.jacobian.is_none() {
                self.build_jacobian(sys)?;
            }
            let Some(solution) = self.solve_stages(sys, h, tolerance)? else {
                self.stats.rejected += 1;
                h *= 0.5;
                self.factored_h = None;
                continue;
            };
            let Some(error_norm) = self.estimate_error(sys, h, rejected)? else {
                continue;
            };
            let safety = newton_safety(NEWTON_MAX_ITERATIONS, solution.iterations);
            if !error_norm.is_finite() || error_norm > 1.0 {
                self.stats.rejected += 1;
                let factor = if error_norm.is_finite() {
                    self.predict_factor(h, error_norm)
                } else {
                    MIN_FACTOR
                };
                h *= MIN_FACTOR.max(safety * factor);
                self.factored_h = None;
                rejected = true;
                continue;
            }
            // Accepted.
            let recompute_jacobian = solution.iterations > 2 && solution.rate.is_some_and(|r| r > 1e-3);
            let mut factor = MAX_FACTOR.min(safety * self.predict_factor(h, error_norm));
            if !recompute_jacobian && factor < 1.2 {
                factor = 1.0;
            } else {
                self.factored_h = None;
            }
            self.store_collocation_polynomial(h);
            let t_prev = self.t;
            self.t = t_new;
            std::mem::swap(&mut self.x, &mut self.buffers.y_new);
            eval_rhs(sys, self.t, &self.x, &mut self.f, &mut self.stats)?;
            if recompute_jacobian {
                self.build_jacobian(sys)?;
            } else {
                self.jacobian_current = false;
            }
            self.stats.steps += 1;
            self.h_old = Some(h);
            self.error_old = Some(error_norm);
            self.h = h * factor;
            return Ok(StepInfo { t_prev, t: self.t });
        }
    }

    fn interpolate(&self, t: f64, out: &mut [f64]) {
        match &self.dense {
            Some(d) if !self.needs_start => d.at(t, out),
            _ => out.copy_from_slice(&self.x),
        }
    }

    fn restart(&mut self, t: f64, x: &[f64]) -> Result<(), IntegrationError> {
        check_restart(t, x, self.x.len())?;
        self.t = t;
        self.x.copy_from_slice(x);
        self.needs_start = true;
        if let Some(clock) = &mut self.clock {
            clock.restart(t);
        }
        self.dense = None;
        self.forget_jacobian();
        Ok(())
    }

    step_accessors!(x, t);
}
