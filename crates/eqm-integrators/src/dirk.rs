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

use crate::control::{BothModes, Trials, error_norm, eval_iterate, first_trial, recovered};
use crate::error::IntegrationError;
use crate::jacobian::{JacobianPoint, KeptJacobian};
use crate::options::Options;
use crate::stats::Stats;
use crate::stepper::{StepEnds, StepInfo, Stepper, step_accessors, zeroed};
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
    /// Controlled steps with embedded weights and no fixed step, else fixed steps.
    modes: BothModes,
    /// The Jacobian and the LU of `I − γ J` with its `γ = h a_ii`.
    kept: KeptJacobian,
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
            modes: BothModes::default(),
            kept: KeptJacobian::default(),
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
        let (atol, rtol, x) = (&self.atol, self.options.rtol, &self.ends.x);
        let floor = |i: usize| atol[i] + rtol * x[i].abs();
        let at = JacobianPoint {
            t: self.ends.t,
            point: x,
            f_point: Some(&self.ends.f),
            floor: &floor,
        };
        self.kept.rebuild(sys, at, &mut self.work, &mut self.stats)
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
                let evaluated = recovered(eval_rhs(sys, t_stage, &base, &mut k, &mut self.stats));
                self.k[i] = k;
                if evaluated? {
                    continue;
                }
                return Ok(false);
            }
            if !matches!(&self.kept.lu, Some((g, _)) if *g == gamma) {
                let Some(j) = &self.kept.jacobian else { return Ok(false) };
                let lu = (DMatrix::identity(n, n) - j * gamma).lu();
                self.stats.factorizations += 1;
                if !lu.is_invertible() {
                    return Ok(false);
                }
                self.kept.lu = Some((gamma, lu));
            }
            // Start from the explicit guess of the stage's previous derivative.
            let guess = if i > 0 { &self.k[i - 1] } else { &self.ends.f };
            for m in 0..n {
                z[m] = base[m] + gamma * guess[m];
            }
            let mut converged = false;
            let mut previous = f64::INFINITY;
            for _ in 0..NEWTON_ITERATIONS {
                if !eval_iterate(sys, t_stage, &z, &mut f, &mut self.stats)? {
                    return Ok(false);
                }
                let mut r = DVector::from_iterator(n, (0..n).map(|m| base[m] + gamma * f[m] - z[m]));
                let Some((_, lu)) = &self.kept.lu else { return Ok(false) };
                // A system without states has nothing to solve (nalgebra's LU rejects size 0).
                if n > 0 && !lu.solve_mut(&mut r) {
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
        if self.kept.jacobian.is_none() {
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
        let controlled = self.options.step.is_none() && self.tableau.b_hat().is_some();
        self.modes.choose(controlled, &self.options, self.tableau.name())?;
        self.ends.reset(dim, &mut self.stats);
        self.k = vec![vec![0.0; dim]; self.tableau.stages()];
        zeroed(dim, [&mut self.x_new, &mut self.f_new, &mut self.work]);
        self.kept.forget();
        self.restart(t0, x0)
    }

    fn step(&mut self, sys: &mut dyn OdeSystem, t_limit: f64) -> Result<StepInfo, IntegrationError> {
        let first = self
            .ends
            .begin_step(sys, t_limit, &mut self.stats, self.options.max_steps)?;
        let t = self.ends.t;
        let b = self.tableau.b().to_vec();
        let Some(h) = self.modes.controlled else {
            let step = self.modes.clock.next(t, t_limit);
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
            self.modes.clock.advance(&step);
            return self.accept(sys, step.t_new);
        };
        let q = self.tableau.order().min(self.tableau.embedded_order().unwrap_or(1));
        let h = first_trial(sys, &self.ends, h, first, &self.atol, &self.options, q, &mut self.stats)?;
        let b_hat = self.tableau.b_hat().map(<[f64]>::to_vec).unwrap_or_default();
        let n = self.ends.x.len();
        let mut embedded = vec![0.0; n];
        let mut trials = Trials::new(t, h, f64::from(q));
        loop {
            let (h, t_new) = trials.next(t_limit, &self.stats, self.options.max_steps)?;
            if !self.attempt(sys, h)? {
                trials.failed(&mut self.stats);
                continue;
            }
            let mut x_new = std::mem::take(&mut self.x_new);
            self.combine(&b, h, &mut x_new);
            self.x_new = x_new;
            self.combine(&b_hat, h, &mut embedded);
            let (x_new, atol) = (&self.x_new, &self.atol);
            let error = error_norm(|i| x_new[i] - embedded[i], &self.ends.x, x_new, atol, self.options.rtol);
            let Some(next) = trials.judge(error, &mut self.stats) else {
                continue;
            };
            self.modes.controlled = Some(next);
            return self.accept(sys, t_new);
        }
    }

    fn restart(&mut self, t: f64, x: &[f64]) -> Result<(), IntegrationError> {
        self.modes.restart_at(&mut self.ends, t, x)?;
        self.kept.forget();
        Ok(())
    }

    step_accessors!(ends with hermite);
}
