//! Fixed-step implicit one-step methods of the θ family: implicit Euler (θ = 1, order 1,
//! L-stable) and the trapezoidal rule (θ = 1/2, order 2, A-stable), for stiff problems where an
//! explicit method needs a step far below what accuracy asks.
//!
//! Input: [`Options`] with the step size `h`, or none for adaptive steps (and `rtol`/`atol`,
//! which set how precisely each step's nonlinear equations are solved, and the step-doubling
//! error allowed). Output: steps of size `h`, each the solution of
//! `y = x + h (θ f(t + h, y) + (1 − θ) f(t, x))` by a simplified Newton iteration on
//! `I − hθ J` with the Jacobian `J` of `f` (the system's own, else forward differences), which is kept (with its LU factors)
//! for as long as the iteration converges quickly, and rebuilt when it does not; dense output by
//! cubic Hermite interpolation between the step's ends.
//!
//! Without a fixed step (`Options::step` is `None`) both methods adapt `h`: each step is taken
//! once whole and once as two halves from the same point, the difference estimates the error
//! of the halves (Richardson), which are kept when it is within the tolerance, and the next
//! step follows from the estimate with the method's order.

use crate::control::{check_budget, error_norm, initial_step, step_factor, trial_step};
use crate::error::{IntegrationError, Quantity, check_finite};
use crate::explicit::FixedClock;
use crate::jacobian::jacobian_at;
use crate::options::Options;
use crate::stepper::{Stats, StepEnds, StepInfo, Stepper, step_ends_accessors, zeroed};
use crate::system::{OdeSystem, eval_rhs};
use nalgebra::{DMatrix, DVector};

/// Simplified Newton iterations per attempt before the Jacobian is rebuilt.
const MAX_NEWTON_ITERATIONS: usize = 8;
/// Full Newton iterations, the last attempt: from far away (a stiff transient inside one step)
/// Newton needs a few iterations to get near before it converges quadratically.
const MAX_FULL_NEWTON_ITERATIONS: usize = 50;
/// The iteration has converged when its correction is this fraction of the error weights
/// `atol + rtol·|y|`: far below what the tolerances allow, so the solve adds no visible error.
const NEWTON_TOLERANCE: f64 = 1e-3;
/// A contraction rate above this makes the Jacobian count as stale.
const SLOW_CONTRACTION: f64 = 0.5;

/// A fixed-step θ-method stepper.
#[derive(Debug)]
pub struct Theta {
    name: &'static str,
    theta: f64,
    options: Options,
    atol: Vec<f64>,
    clock: FixedClock,
    ends: StepEnds,
    /// The Jacobian of `f` and the LU factors of `I − hθ J` for the step size `lu_h`.
    jacobian: Option<DMatrix<f64>>,
    lu: Option<(f64, nalgebra::LU<f64, nalgebra::Dyn, nalgebra::Dyn>)>,
    /// Newton's iterate, the right-hand side there, the residual and a work vector.
    y: Vec<f64>,
    f_y: Vec<f64>,
    residual: DVector<f64>,
    work: Vec<f64>,
    stats: Stats,
    /// Without a fixed step (`--step`): the step size to try next, chosen from step-doubling
    /// error estimates.
    adaptive: Option<f64>,
}

/// The order of the θ-method (2 for the trapezoid, 1 otherwise).
fn order(theta: f64) -> i32 {
    if theta == 0.5 { 2 } else { 1 }
}

impl Theta {
    /// Implicit (backward) Euler.
    pub fn implicit_euler(options: Options) -> Self {
        Theta::new("implicit-euler", 1.0, options)
    }

    /// The trapezoidal rule.
    pub fn trapezoid(options: Options) -> Self {
        Theta::new("trapezoid", 0.5, options)
    }

    fn new(name: &'static str, theta: f64, options: Options) -> Self {
        Theta {
            name,
            theta,
            options,
            atol: Vec::new(),
            clock: FixedClock::default(),
            ends: StepEnds::default(),
            jacobian: None,
            lu: None,
            y: Vec::new(),
            f_y: Vec::new(),
            residual: DVector::zeros(0),
            work: Vec::new(),
            stats: Stats::default(),
            adaptive: None,
        }
    }

    /// The forward-difference Jacobian of `f` at `(t, point)`, where `f` is `f_point`.
    /// Invalidates the LU factors.
    fn build_jacobian(
        &mut self,
        sys: &mut dyn OdeSystem,
        t: f64,
        point: &[f64],
        f_point: &[f64],
    ) -> Result<(), IntegrationError> {
        let n = point.len();
        let mut jacobian = self.jacobian.take().unwrap_or_else(|| DMatrix::zeros(n, n));
        jacobian_at(
            sys,
            t,
            point,
            Some(f_point),
            &|_| 1.0,
            &mut self.work,
            &mut jacobian,
            &mut self.stats,
        )?;
        self.jacobian = Some(jacobian);
        self.lu = None;
        Ok(())
    }

    /// Factors `I − hθ J` for step size `h` unless the factors for it are at hand; false when
    /// the matrix is singular.
    fn factor(&mut self, h: f64) -> bool {
        if matches!(&self.lu, Some((lu_h, _)) if *lu_h == h) {
            return true;
        }
        let Some(jacobian) = &self.jacobian else {
            return false;
        };
        let n = jacobian.nrows();
        let matrix = DMatrix::identity(n, n) - jacobian * (h * self.theta);
        let lu = matrix.lu();
        if !lu.is_invertible() {
            self.lu = None;
            return false;
        }
        self.lu = Some((h, lu));
        true
    }

    /// Newton's iteration for the step from the current point to `t_new` with size `h`,
    /// starting from the current state (an explicit predictor can land far from a stiff
    /// problem's slow manifold). With `full`, the Jacobian is rebuilt at every iterate (full
    /// Newton, for steps the kept Jacobian cannot solve); otherwise the kept one is used.
    /// `Ok(true)` when it converged (`y` and `f_y` hold the solution and `f` there), `Ok(false)`
    /// when it did not.
    fn newton(&mut self, sys: &mut dyn OdeSystem, h: f64, t_new: f64, full: bool) -> Result<bool, IntegrationError> {
        let n = self.y.len();
        self.y.copy_from_slice(&self.ends.x);
        let mut previous = f64::INFINITY;
        let iterations = if full {
            MAX_FULL_NEWTON_ITERATIONS
        } else {
            MAX_NEWTON_ITERATIONS
        };
        for _ in 0..iterations {
            // A trial point or derivative that is not finite means this Jacobian led Newton
            // astray; the caller retries with a fresh one before failing.
            if check_finite(t_new, &self.y, Quantity::State).is_err() {
                return Ok(false);
            }
            match eval_rhs(sys, t_new, &self.y, &mut self.f_y, &mut self.stats) {
                Ok(()) => {}
                Err(e) if e.is_recoverable() => return Ok(false),
                Err(e) => return Err(e),
            }
            if full {
                // Moved out for the call rather than copied: full Newton rebuilds every iteration.
                let (y, f_y) = (std::mem::take(&mut self.y), std::mem::take(&mut self.f_y));
                let built = self.build_jacobian(sys, t_new, &y, &f_y);
                (self.y, self.f_y) = (y, f_y);
                built?;
            }
            if !self.factor(h) {
                return Ok(false);
            }
            // G(y) = y − x − h(θ f(t_new, y) + (1 − θ) f(t, x)); the correction solves
            // (I − hθ J) Δ = −G(y).
            for i in 0..n {
                let g =
                    self.y[i] - self.ends.x[i] - h * (self.theta * self.f_y[i] + (1.0 - self.theta) * self.ends.f[i]);
                self.residual[i] = -g;
            }
            let Some((_, lu)) = &self.lu else {
                return Ok(false);
            };
            if !lu.solve_mut(&mut self.residual) {
                return Ok(false);
            }
            let mut size: f64 = 0.0;
            for i in 0..n {
                self.y[i] += self.residual[i];
                let weight = self.atol[i] + self.options.rtol * self.y[i].abs();
                size = size.max(self.residual[i].abs() / weight);
            }
            if !size.is_finite() {
                return Ok(false);
            }
            if size <= NEWTON_TOLERANCE {
                // `f_y` must belong to the final iterate: it is the derivative at the new
                // point, used by the next step and by dense output.
                eval_rhs(sys, t_new, &self.y, &mut self.f_y, &mut self.stats)?;
                return Ok(true);
            }
            if !full && size > SLOW_CONTRACTION * previous && previous.is_finite() {
                return Ok(false);
            }
            previous = size;
        }
        Ok(false)
    }
}

impl Theta {
    /// Solves the step of size `h` from the current point to `t_new`: with the Jacobian kept
    /// from earlier steps; then with a fresh one at the step's start (kept for the next steps);
    /// then, for a step where `f` changes too much for any fixed Jacobian, full Newton (whose
    /// last Jacobian, at the new point, is kept). The solution is in `y`, `f_y`.
    fn solve_step(&mut self, sys: &mut dyn OdeSystem, h: f64, t_new: f64) -> Result<bool, IntegrationError> {
        let t = self.ends.t;
        for attempt in 0..3 {
            if attempt == 1 || (attempt == 0 && self.jacobian.is_none()) {
                let (x, f) = (std::mem::take(&mut self.ends.x), std::mem::take(&mut self.ends.f));
                let built = self.build_jacobian(sys, t, &x, &f);
                (self.ends.x, self.ends.f) = (x, f);
                built?;
            }
            if self.newton(sys, h, t_new, attempt == 2)? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// One adaptive step: a step of `h` and two of `h/2` from the same point; their difference
    /// estimates the error of the two half steps (Richardson), which are kept when it is within
    /// the tolerance. The next `h` follows from the estimate.
    fn adaptive_step(&mut self, sys: &mut dyn OdeSystem, t_limit: f64) -> Result<StepInfo, IntegrationError> {
        let first = self
            .ends
            .begin_step(sys, t_limit, &mut self.stats, self.options.max_steps)?;
        let p = order(self.theta);
        let mut h = self.adaptive.unwrap_or(0.0);
        if first || h <= 0.0 {
            h = initial_step(
                sys,
                self.ends.t,
                &self.ends.x,
                &self.ends.f,
                &self.atol,
                self.options.rtol,
                p as u32,
                &mut self.stats,
            )?;
        }
        if let Some(max) = self.options.max_step {
            h = h.min(max);
        }
        let (t, x, f) = (self.ends.t, self.ends.x.clone(), self.ends.f.clone());
        let min_step = 10.0 * (t.abs() * f64::EPSILON).max(f64::MIN_POSITIVE);
        loop {
            check_budget(t, &self.stats, self.options.max_steps)?;
            if h < min_step {
                return Err(IntegrationError::StepSizeUnderflow { time: t, step: h });
            }
            let t_new;
            (h, t_new) = trial_step(t, h, t_limit, min_step);
            // The whole step, then the two halves from the same start.
            let whole = self.solve_step(sys, h, t_new)?.then(|| self.y.clone());
            let half = whole.is_some() && self.solve_step(sys, 0.5 * h, t + 0.5 * h)?;
            let mut second = false;
            if half {
                self.ends.t = t + 0.5 * h;
                self.ends.x.copy_from_slice(&self.y);
                self.ends.f.copy_from_slice(&self.f_y);
                second = self.solve_step(sys, t_new - self.ends.t, t_new)?;
                self.ends.t = t;
                self.ends.x.copy_from_slice(&x);
                self.ends.f.copy_from_slice(&f);
            }
            let Some(whole) = whole.filter(|_| second) else {
                self.stats.rejected += 1;
                h *= 0.25;
                continue;
            };
            let denominator = f64::from(2i32.pow(p as u32) - 1);
            let error = error_norm(&x, &self.y, &whole, denominator, &self.atol, self.options.rtol);
            let factor = step_factor(error, f64::from(p));
            if error.is_nan() || error > 1.0 {
                self.stats.rejected += 1;
                h *= factor.min(0.9);
                continue;
            }
            self.adaptive = Some(h * factor);
            let (mut y, mut f_y) = (std::mem::take(&mut self.y), std::mem::take(&mut self.f_y));
            let info = self.ends.accept(t_new, &mut y, &mut f_y, &mut self.stats);
            (self.y, self.f_y) = (y, f_y);
            return Ok(info);
        }
    }
}

impl Stepper for Theta {
    fn name(&self) -> &str {
        self.name
    }

    fn initialize(&mut self, sys: &mut dyn OdeSystem, t0: f64, x0: &[f64]) -> Result<(), IntegrationError> {
        let dim = sys.dim();
        self.atol = self.options.atol_per_component(dim)?;
        if self.options.step.is_some() {
            self.clock.h = self.options.fixed_step(self.name)?;
            self.adaptive = None;
        } else {
            // Chosen at the first step, from the derivative there.
            self.adaptive = Some(0.0);
        }
        self.ends.reset(dim, &mut self.stats);
        zeroed(dim, [&mut self.y, &mut self.f_y, &mut self.work]);
        self.residual = DVector::zeros(dim);
        self.jacobian = None;
        self.lu = None;
        self.restart(t0, x0)
    }

    fn step(&mut self, sys: &mut dyn OdeSystem, t_limit: f64) -> Result<StepInfo, IntegrationError> {
        if self.adaptive.is_some() {
            return self.adaptive_step(sys, t_limit);
        }
        let t = self.ends.t;
        self.ends
            .begin_step(sys, t_limit, &mut self.stats, self.options.max_steps)?;
        let step = self.clock.next(t, t_limit);
        let converged = self.solve_step(sys, step.h, step.t_new)?;

        if !converged {
            return Err(IntegrationError::Rhs {
                time: step.t_new,
                message: format!(
                    "the {} step's Newton iteration did not converge; try a smaller --step",
                    self.name
                ),
            });
        }
        Ok(self
            .clock
            .finish(&step, &mut self.ends, &mut self.y, &mut self.f_y, &mut self.stats))
    }

    fn interpolate(&self, t: f64, out: &mut [f64]) {
        self.ends.hermite(t, out);
    }

    fn restart(&mut self, t: f64, x: &[f64]) -> Result<(), IntegrationError> {
        self.clock.restart_at(&mut self.ends, t, x)?;
        if self.adaptive.is_some() {
            self.adaptive = Some(0.0);
        }
        // The Jacobian belongs to the old trajectory (after an event the equations may differ).
        self.jacobian = None;
        self.lu = None;
        Ok(())
    }

    step_ends_accessors!();
}
