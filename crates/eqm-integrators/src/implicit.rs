//! Implicit one-step methods of the θ family: implicit Euler (θ = 1, order 1,
//! L-stable) and the trapezoidal rule (θ = 1/2, order 2, A-stable), for stiff problems where an
//! explicit method needs a step far below what accuracy asks.
//!
//! Input: [`Options`] with the step size `h`, or none for adaptive steps (and `rtol`/`atol`, which
//! set how precisely each step's nonlinear equations are solved, and the step-doubling error
//! allowed). Output: steps of size `h`, each the solution of `y = x + h (θ f(t + h, y) + (1 − θ)
//! f(t, x))` by a simplified Newton iteration on `I − hθ J` with the Jacobian `J` of `f` (the
//! system's own, else forward differences), which is kept (with its LU factors) for as long as the
//! iteration converges quickly, and rebuilt when it does not; dense output by cubic Hermite
//! interpolation between the step's ends.
//!
//! Without a fixed step (`Options::step` is `None`) both methods adapt `h`: each step is taken
//! once whole and once as two halves from the same point, the difference estimates the error
//! of the halves (Richardson), which are kept when it is within the tolerance, and the next
//! step follows from the estimate with the method's order. Deliberately not here: methods of
//! higher order (BDF, Radau IIA and DIRK tableaux are in their own modules).

use crate::control::{BothModes, Trials, error_norm, eval_iterate, first_trial};
use crate::error::IntegrationError;
use crate::jacobian::{JacobianPoint, KeptJacobian};
use crate::options::Options;
use crate::stats::Stats;
use crate::stepper::{StepEnds, StepInfo, Stepper, step_accessors, zeroed};
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
    /// Fixed steps of `--step`, else steps chosen from step-doubling error estimates.
    modes: BothModes,
    ends: StepEnds,
    /// The Jacobian of `f` and the LU factors of `I − hθ J` with the step size `h` they are for.
    kept: KeptJacobian,
    /// Newton's iterate, the right-hand side there, the residual and a work vector.
    y: Vec<f64>,
    f_y: Vec<f64>,
    residual: DVector<f64>,
    work: Vec<f64>,
    stats: Stats,
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
            modes: BothModes::default(),
            ends: StepEnds::default(),
            kept: KeptJacobian::default(),
            y: Vec::new(),
            f_y: Vec::new(),
            residual: DVector::zeros(0),
            work: Vec::new(),
            stats: Stats::default(),
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
        let at = JacobianPoint {
            t,
            point,
            f_point: Some(f_point),
            floor: &|_| 1.0,
        };
        self.kept.rebuild(sys, at, &mut self.work, &mut self.stats)
    }

    /// Factors `I − hθ J` for step size `h` unless the factors for it are at hand; false when
    /// the matrix is singular.
    fn factor(&mut self, h: f64) -> bool {
        if matches!(&self.kept.lu, Some((lu_h, _)) if *lu_h == h) {
            return true;
        }
        let Some(jacobian) = &self.kept.jacobian else {
            return false;
        };
        let n = jacobian.nrows();
        let matrix = DMatrix::identity(n, n) - jacobian * (h * self.theta);
        let lu = matrix.lu();
        if !lu.is_invertible() {
            self.kept.lu = None;
            return false;
        }
        self.kept.lu = Some((h, lu));
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
            if !eval_iterate(sys, t_new, &self.y, &mut self.f_y, &mut self.stats)? {
                return Ok(false);
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
            let Some((_, lu)) = &self.kept.lu else {
                return Ok(false);
            };
            // A system without states has nothing to solve (nalgebra's LU rejects size 0).
            if n > 0 && !lu.solve_mut(&mut self.residual) {
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
            if attempt == 1 || (attempt == 0 && self.kept.jacobian.is_none()) {
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
        let kept = self.modes.controlled.unwrap_or(0.0);
        let h = first_trial(
            sys,
            &self.ends,
            kept,
            first,
            &self.atol,
            &self.options,
            p as u32,
            &mut self.stats,
        )?;
        let (t, x, f) = (self.ends.t, self.ends.x.clone(), self.ends.f.clone());
        let mut trials = Trials::new(t, h, f64::from(p));
        loop {
            let (h, t_new) = trials.next(t_limit, &self.stats, self.options.max_steps)?;
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
                trials.failed(&mut self.stats);
                continue;
            };
            let denominator = f64::from(2i32.pow(p as u32) - 1);
            let (y, atol) = (&self.y, &self.atol);
            let error = error_norm(|i| (y[i] - whole[i]) / denominator, &x, y, atol, self.options.rtol);
            let Some(next) = trials.judge(error, &mut self.stats) else {
                continue;
            };
            self.modes.controlled = Some(next);
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
        self.modes
            .choose(self.options.step.is_none(), &self.options, self.name)?;
        self.ends.reset(dim, &mut self.stats);
        zeroed(dim, [&mut self.y, &mut self.f_y, &mut self.work]);
        self.residual = DVector::zeros(dim);
        self.kept.forget();
        self.restart(t0, x0)
    }

    fn step(&mut self, sys: &mut dyn OdeSystem, t_limit: f64) -> Result<StepInfo, IntegrationError> {
        if self.modes.controlled.is_some() {
            return self.adaptive_step(sys, t_limit);
        }
        let t = self.ends.t;
        self.ends
            .begin_step(sys, t_limit, &mut self.stats, self.options.max_steps)?;
        let step = self.modes.clock.next(t, t_limit);
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
            .modes
            .clock
            .finish(&step, &mut self.ends, &mut self.y, &mut self.f_y, &mut self.stats))
    }

    fn restart(&mut self, t: f64, x: &[f64]) -> Result<(), IntegrationError> {
        self.modes.restart_at(&mut self.ends, t, x)?;
        self.kept.forget();
        Ok(())
    }

    step_accessors!(ends with hermite);
}
