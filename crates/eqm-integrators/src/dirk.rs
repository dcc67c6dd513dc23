//! Diagonally implicit Runge–Kutta methods (DIRK, SDIRK, ESDIRK) from a user's Butcher tableau,
//! for stiff problems.
//!
//! Input: a [`Tableau`] whose `a` is lower triangular with at least one diagonal entry, and
//! [`Options`]: a fixed step `h`, or, for a tableau with embedded weights and no fixed step,
//! tolerances for step size control. Output: accepted steps with cubic Hermite dense output.
//!
//! Stage `i` solves `z = x + h Σ_{j<i} a_ij k_j + h a_ii f(t + c_i h, z)` by simplified Newton
//! with the matrix `I − h a_ii J`; the difference-quotient Jacobian `J` (scaled by the error
//! weights) is taken at the step's start and kept across steps while Newton converges, the LU
//! factors are kept per value of `h a_ii` (one for all stages of an SDIRK method). The stage
//! derivative is recovered as `k_i = (z − base)/(h a_ii)`, which saves an evaluation and keeps
//! stiffly accurate methods L-stable in practice. Explicit stages (`a_ii = 0`) are evaluated.
//!
//! The Jacobian is the system's own when it has one, else forward differences. Deliberately not
//! here: fully implicit tableaux (see `radau`).

use crate::control::{check_budget, error_norm, initial_step, step_factor, trial_step};
use crate::error::{IntegrationError, Quantity, check_finite};
use crate::explicit::FixedClock;
use crate::jacobian::jacobian_at;
use crate::options::Options;
use crate::stepper::{Stats, StepEnds, StepInfo, Stepper, step_ends_accessors, zeroed};
use crate::system::{OdeSystem, eval_rhs};
use crate::tableau::Tableau;
use nalgebra::{DMatrix, DVector};

const NEWTON_ITERATIONS: usize = 10;
/// The stage iteration has converged when its correction is this fraction of the error weights.
const NEWTON_TOLERANCE: f64 = 1e-3;

/// A DIRK stepper.
#[derive(Debug)]
pub struct Dirk {
    tableau: Tableau,
    options: Options,
    atol: Vec<f64>,
    ends: StepEnds,
    clock: FixedClock,
    /// With embedded weights and no fixed step: the step to try next.
    adaptive: Option<f64>,
    jacobian: Option<DMatrix<f64>>,
    /// LU of `I − γ J` with its `γ = h a_ii`.
    lu: Option<(f64, nalgebra::LU<f64, nalgebra::Dyn, nalgebra::Dyn>)>,
    k: Vec<Vec<f64>>,
    x_new: Vec<f64>,
    f_new: Vec<f64>,
    work: Vec<f64>,
    stats: Stats,
}

impl Dirk {
    pub fn new(tableau: Tableau, options: Options) -> Self {
        Dirk {
            tableau,
            options,
            atol: Vec::new(),
            ends: StepEnds::default(),
            clock: FixedClock::default(),
            adaptive: None,
            jacobian: None,
            lu: None,
            k: Vec::new(),
            x_new: Vec::new(),
            f_new: Vec::new(),
            work: Vec::new(),
            stats: Stats::default(),
        }
    }

    fn weight(&self, i: usize, z: f64) -> f64 {
        self.atol[i] + self.options.rtol * z.abs()
    }

    fn build_jacobian(&mut self, sys: &mut dyn OdeSystem) -> Result<(), IntegrationError> {
        let n = self.ends.x.len();
        let mut j = self.jacobian.take().unwrap_or_else(|| DMatrix::zeros(n, n));
        let (atol, rtol, x) = (&self.atol, self.options.rtol, &self.ends.x);
        let floor = |i: usize| atol[i] + rtol * x[i].abs();
        jacobian_at(
            sys,
            self.ends.t,
            x,
            Some(&self.ends.f),
            &floor,
            &mut self.work,
            &mut j,
            &mut self.stats,
        )?;
        self.jacobian = Some(j);
        self.lu = None;
        Ok(())
    }

    /// All stages of a step of size `h`; `Ok(false)` when a stage's Newton iteration failed.
    fn stages(&mut self, sys: &mut dyn OdeSystem, h: f64) -> Result<bool, IntegrationError> {
        let s = self.tableau.stages();
        let n = self.ends.x.len();
        let t = self.ends.t;
        let mut base = vec![0.0; n];
        let mut z = vec![0.0; n];
        let mut f = vec![0.0; n];
        for i in 0..s {
            base.copy_from_slice(&self.ends.x);
            for j in 0..i {
                let a = self.tableau.a(i, j);
                if a != 0.0 {
                    for (b, kj) in base.iter_mut().zip(&self.k[j]) {
                        *b += h * a * kj;
                    }
                }
            }
            let t_stage = t + self.tableau.c()[i] * h;
            let gamma = h * self.tableau.a(i, i);
            if gamma == 0.0 {
                let mut k = std::mem::take(&mut self.k[i]);
                let evaluated = eval_rhs(sys, t_stage, &base, &mut k, &mut self.stats);
                self.k[i] = k;
                match evaluated {
                    Ok(()) => continue,
                    Err(e) if e.is_recoverable() => return Ok(false),
                    Err(e) => return Err(e),
                }
            }
            if !matches!(&self.lu, Some((g, _)) if *g == gamma) {
                let Some(j) = &self.jacobian else { return Ok(false) };
                let lu = (DMatrix::identity(n, n) - j * gamma).lu();
                self.stats.factorizations += 1;
                if !lu.is_invertible() {
                    return Ok(false);
                }
                self.lu = Some((gamma, lu));
            }
            // Start from the explicit guess of the stage's previous derivative.
            let guess = if i > 0 { &self.k[i - 1] } else { &self.ends.f };
            for m in 0..n {
                z[m] = base[m] + gamma * guess[m];
            }
            let mut converged = false;
            let mut previous = f64::INFINITY;
            for _ in 0..NEWTON_ITERATIONS {
                if check_finite(t_stage, &z, Quantity::State).is_err() {
                    return Ok(false);
                }
                match eval_rhs(sys, t_stage, &z, &mut f, &mut self.stats) {
                    Ok(()) => {}
                    Err(e) if e.is_recoverable() => return Ok(false),
                    Err(e) => return Err(e),
                }
                let mut r = DVector::from_iterator(n, (0..n).map(|m| base[m] + gamma * f[m] - z[m]));
                let Some((_, lu)) = &self.lu else { return Ok(false) };
                if !lu.solve_mut(&mut r) {
                    return Ok(false);
                }
                let mut size: f64 = 0.0;
                for m in 0..n {
                    z[m] += r[m];
                    size = size.max(r[m].abs() / self.weight(m, z[m]));
                }
                if !size.is_finite() || size > previous {
                    break;
                }
                if size <= NEWTON_TOLERANCE {
                    converged = true;
                    break;
                }
                previous = size;
            }
            if !converged {
                return Ok(false);
            }
            for m in 0..n {
                self.k[i][m] = (z[m] - base[m]) / gamma;
            }
        }
        Ok(true)
    }

    /// The new point from the stages with weights `w`, into `out`.
    fn combine(&self, w: &[f64], h: f64, out: &mut [f64]) {
        out.copy_from_slice(&self.ends.x);
        for (j, &wj) in w.iter().enumerate() {
            if wj != 0.0 {
                for (o, kj) in out.iter_mut().zip(&self.k[j]) {
                    *o += h * wj * kj;
                }
            }
        }
    }

    /// Stages with the kept Jacobian, then with a fresh one; `Ok(false)` when neither converged.
    fn attempt(&mut self, sys: &mut dyn OdeSystem, h: f64) -> Result<bool, IntegrationError> {
        if self.jacobian.is_none() {
            self.build_jacobian(sys)?;
            return self.stages(sys, h);
        }
        if self.stages(sys, h)? {
            return Ok(true);
        }
        self.build_jacobian(sys)?;
        self.stages(sys, h)
    }

    fn accept(&mut self, sys: &mut dyn OdeSystem, t_new: f64) -> Result<StepInfo, IntegrationError> {
        eval_rhs(sys, t_new, &self.x_new, &mut self.f_new, &mut self.stats)?;
        Ok(self
            .ends
            .accept(t_new, &mut self.x_new, &mut self.f_new, &mut self.stats))
    }
}

impl Stepper for Dirk {
    fn name(&self) -> &str {
        self.tableau.name()
    }

    fn initialize(&mut self, sys: &mut dyn OdeSystem, t0: f64, x0: &[f64]) -> Result<(), IntegrationError> {
        let dim = sys.dim();
        self.atol = self.options.atol_per_component(dim)?;
        if self.options.step.is_none() && self.tableau.b_hat().is_some() {
            self.adaptive = Some(0.0);
        } else {
            self.clock.h = self.options.fixed_step(self.tableau.name())?;
            self.adaptive = None;
        }
        self.ends.reset(dim, &mut self.stats);
        self.k = vec![vec![0.0; dim]; self.tableau.stages()];
        zeroed(dim, [&mut self.x_new, &mut self.f_new, &mut self.work]);
        self.jacobian = None;
        self.lu = None;
        self.restart(t0, x0)
    }

    fn step(&mut self, sys: &mut dyn OdeSystem, t_limit: f64) -> Result<StepInfo, IntegrationError> {
        let first = self
            .ends
            .begin_step(sys, t_limit, &mut self.stats, self.options.max_steps)?;
        let t = self.ends.t;
        let b = self.tableau.b().to_vec();
        let Some(mut h) = self.adaptive else {
            let step = self.clock.next(t, t_limit);
            if !self.attempt(sys, step.h)? {
                return Err(IntegrationError::Rhs {
                    time: step.t_new,
                    message: format!(
                        "a stage of the {} step did not converge; try a smaller --step",
                        self.tableau.name()
                    ),
                });
            }
            let mut x_new = std::mem::take(&mut self.x_new);
            self.combine(&b, step.h, &mut x_new);
            self.x_new = x_new;
            self.clock.advance(&step);
            return self.accept(sys, step.t_new);
        };
        let q = f64::from(self.tableau.order().min(self.tableau.embedded_order().unwrap_or(1)));
        if first || h <= 0.0 {
            h = initial_step(
                sys,
                t,
                &self.ends.x,
                &self.ends.f,
                &self.atol,
                self.options.rtol,
                q as u32,
                &mut self.stats,
            )?;
        }
        if let Some(max) = self.options.max_step {
            h = h.min(max);
        }
        let b_hat = self.tableau.b_hat().map(<[f64]>::to_vec).unwrap_or_default();
        let n = self.ends.x.len();
        let min_step = 10.0 * (t.abs() * f64::EPSILON).max(f64::MIN_POSITIVE);
        let mut embedded = vec![0.0; n];
        loop {
            check_budget(t, &self.stats, self.options.max_steps)?;
            if h < min_step {
                return Err(IntegrationError::StepSizeUnderflow { time: t, step: h });
            }
            let t_new;
            (h, t_new) = trial_step(t, h, t_limit, min_step);
            if !self.attempt(sys, h)? {
                self.stats.rejected += 1;
                h *= 0.25;
                continue;
            }
            let mut x_new = std::mem::take(&mut self.x_new);
            self.combine(&b, h, &mut x_new);
            self.x_new = x_new;
            self.combine(&b_hat, h, &mut embedded);
            let error = error_norm(&self.ends.x, &self.x_new, &embedded, 1.0, &self.atol, self.options.rtol);
            let factor = step_factor(error, q);
            if error.is_nan() || error > 1.0 {
                self.stats.rejected += 1;
                h *= factor.min(0.9);
                continue;
            }
            self.adaptive = Some(h * factor);
            return self.accept(sys, t_new);
        }
    }

    fn interpolate(&self, t: f64, out: &mut [f64]) {
        self.ends.hermite(t, out);
    }

    fn restart(&mut self, t: f64, x: &[f64]) -> Result<(), IntegrationError> {
        self.clock.restart_at(&mut self.ends, t, x)?;
        if self.adaptive.is_some() {
            self.adaptive = Some(0.0);
        }
        self.jacobian = None;
        self.lu = None;
        Ok(())
    }

    step_ends_accessors!();
}
