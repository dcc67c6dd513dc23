//! The equation solvers both back ends share: damped scalar Newton with the continuation on
//! the start value of [`super::start_path`], a Newton homotopy and a bracketing search as
//! fallbacks, Newton on torn loops with the trust-region method of [`super::dogleg`], the
//! continuation and the Newton homotopy as fallbacks, and the LU solves of loop Jacobians.
//!
//! Input: an implicit equation or a torn loop through the [`ScalarProblem`] and
//! [`LoopProblem`] traits, implemented here once by the register code and once by native code,
//! so that both take the same steps and agree bit for bit. Output: the unknowns written into
//! their slots, or a [`SolveError`]. Nothing here compiles code.

use super::*;

/// What went wrong while solving, before the site is added.
pub(super) enum SolveError {
    Fault(Fault),
    Kind(FailureKind),
}

impl From<Fault> for SolveError {
    fn from(f: Fault) -> SolveError {
        SolveError::Fault(f)
    }
}

/// Native code failed: its failure as the interpreter reports it. Only a failure of the code
/// is expected; a length error cannot happen, because the arrays were checked against the
/// layout the code was compiled for, but it is reported rather than ignored.
impl From<JitError> for SolveError {
    fn from(e: JitError) -> SolveError {
        match e {
            JitError::Failed { kind, .. } => SolveError::Kind(kind),
            _ => SolveError::Kind(FailureKind::Dimension {
                array: "native code",
                expected: 0,
                found: 0,
            }),
        }
    }
}

/// What the scalar Newton iteration needs of an implicit equation `residual(target) = 0`. The
/// interpreter's register code and native code both provide it, so that both back ends run
/// the one iteration of `solve_scalar`.
pub(super) trait ScalarProblem {
    /// Writes `z` into the target and evaluates the residual there.
    fn residual(&mut self, z: f64) -> Result<f64, SolveError>;
    /// The symbolic derivative of the residual at the point evaluated last; `None` when there
    /// is none, and a difference quotient is used instead.
    fn derivative(&mut self) -> Option<Result<f64, SolveError>>;
    /// The value the target holds.
    fn value(&self) -> f64;
}

/// Scalar Newton with a backtracking line search on `|residual|`, starting from `guess` (the
/// value the target holds); when that fails to converge, the homotopy of [`homotopy_steps`]
/// from the same start; then, with `bracketing` (the initialization), [`bracket_scalar`] and
/// last the continuation of [`scalar_start_path`]. On success the target
/// holds the solution, and the method that found it when plain Newton did not.
pub(super) fn solve_scalar(
    guess: f64,
    f: &mut dyn ScalarProblem,
    bracketing: bool,
) -> Result<Option<Recovery>, SolveError> {
    let mut start = if guess.is_finite() { guess } else { 0.0 };
    let mut first = newton_scalar(start, f);
    if matches!(first, Err(SolveError::Kind(FailureKind::NotFinite { .. }))) {
        let beside = inside_domain(start, f)?;
        if beside != start {
            start = beside;
            first = newton_scalar(start, f);
        }
    }
    let failure = match first {
        Ok(_) => return Ok(None),
        Err(e) if !may_recover(&e) => return Err(e),
        Err(e) => e,
    };
    let newton = NewtonFailure::of(&failure);
    let r0 = f.residual(start)?;
    let mut z = start;
    let mut stages = 0;
    let found = homotopy_steps(|lambda| {
        stages += 1;
        let mut shifted = ShiftedScalar {
            inner: &mut *f,
            offset: (1.0 - lambda) * r0,
        };
        newton_scalar(z, &mut shifted).map(|solution| z = solution).is_ok()
    });
    if found {
        let method = RecoveryMethod::Homotopy;
        return Ok(Some(Recovery {
            newton,
            method,
            iterations: stages,
        }));
    }
    if !bracketing {
        return Err(failure);
    }
    if bracket_scalar(start, r0, f)?.is_some() {
        return Ok(Some(Recovery {
            newton,
            method: RecoveryMethod::Bracketing,
            iterations: 0,
        }));
    }
    // Last, since the search finds the root nearest the start, which a path may not.
    match scalar_start_path(start, f) {
        Some(steps) => Ok(Some(Recovery {
            newton,
            method: RecoveryMethod::Continuation,
            iterations: steps,
        })),
        None => Err(failure),
    }
}

/// A start for Newton where the residual is finite: `start` itself when it is, otherwise the
/// nearest of the points a search outward from it finds (on both sides, the larger first, at
/// doubling distances, as [`bracket_scalar`] searches), or `start` when none is. A start value
/// outside the residual's domain (`r = 1/g` from `g = 0`, the start of a variable without one)
/// says nothing about where the solution is, so a point beside it serves as well; the method
/// from there still has to converge to a root.
fn inside_domain(start: f64, f: &mut dyn ScalarProblem) -> Result<f64, SolveError> {
    if f.residual(start)?.is_finite() {
        return Ok(start);
    }
    let scale = start.abs().max(1.0);
    for k in 0..48 {
        let distance = scale * 0.125 * 2f64.powi(k);
        for direction in [1.0, -1.0] {
            let z = start + direction * distance;
            if f.residual(z).is_ok_and(f64::is_finite) {
                return Ok(z);
            }
        }
    }
    Ok(start)
}

/// The last resort for a scalar equation Newton does not solve from `start` (a zero derivative
/// there, as `cos(x) = 0` at `x = 0`): a search outward from `start`, on both sides at
/// doubling distances, for a change of sign of the residual (`r0` at `start`), then the
/// Illinois method inside that bracket and Newton to polish. The root found is the one nearest
/// the start value that such a search can see. On success the target holds it.
fn bracket_scalar(start: f64, r0: f64, f: &mut dyn ScalarProblem) -> Result<Option<f64>, SolveError> {
    if !r0.is_finite() {
        return Ok(None);
    }
    let scale = start.abs().max(1.0);
    let mut previous = [(start, r0), (start, r0)];
    let mut bracket = None;
    'search: for k in 0..48 {
        let distance = scale * 0.125 * 2f64.powi(k);
        for (side, direction) in [1.0, -1.0].into_iter().enumerate() {
            let z = start + direction * distance;
            // A point outside the residual's domain is no bracket end; the search goes on.
            let Ok(r) = f.residual(z) else { continue };
            if !r.is_finite() {
                continue;
            }
            if r == 0.0 || r.signum() != previous[side].1.signum() {
                bracket = Some((previous[side], (z, r)));
                break 'search;
            }
            previous[side] = (z, r);
        }
    }
    let Some(((mut a, mut ra), (mut b, mut rb))) = bracket else {
        return Ok(None);
    };
    for _ in 0..200 {
        if rb == 0.0 || (b - a).abs() <= 4.0 * f64::EPSILON * a.abs().max(b.abs()) {
            break;
        }
        let mut m = (a * rb - b * ra) / (rb - ra);
        if !(m > a.min(b) && m < a.max(b)) {
            m = 0.5 * (a + b);
        }
        let Ok(rm) = f.residual(m) else { return Ok(None) };
        if !rm.is_finite() {
            return Ok(None);
        }
        // The Illinois rule: `b` is the newest point and the residuals at `a` and `b` differ
        // in sign; an end kept twice has its residual halved.
        if rm.signum() != rb.signum() {
            (a, ra) = (b, rb);
        } else {
            ra *= 0.5;
        }
        (b, rb) = (m, rm);
    }
    // Newton from the bracketed point (the target ends up holding the solution).
    match newton_scalar(b, f) {
        Ok(z) => Ok(Some(z)),
        Err(_) => {
            f.residual(b)?;
            Ok((rb.abs() <= 1e-12 * r0.abs().max(1.0)).then_some(b))
        }
    }
}

/// Whether a failed Newton iteration may succeed by homotopy: it stopped for lack of progress
/// (not converging, or a singular derivative on the way), not because the model failed.
pub(super) fn may_recover(e: &SolveError) -> bool {
    matches!(
        e,
        SolveError::Kind(FailureKind::NoConvergence { .. } | FailureKind::Singular)
    )
}

/// Newton homotopy, the fallback when Newton from the start point `s` fails: the residuals
/// `F(z) - (1 - λ) F(s)` vanish at `s` for λ = 0 and are the problem's own for λ = 1. `solve_at`
/// solves the problem at one λ, starting from the last solution, and says whether it converged;
/// λ advances from 0 to 1 in steps that double after a success and halve after a failure.
/// Returns whether λ = 1 was reached (the problem's own solution is then the last one found).
pub(super) fn homotopy_steps(mut solve_at: impl FnMut(f64) -> bool) -> bool {
    let (mut lambda, mut step) = (0.0f64, HOMOTOPY_FIRST_STEP);
    while lambda < 1.0 {
        let next = (lambda + step).min(1.0);
        if solve_at(next) {
            lambda = next;
            step = (2.0 * step).min(HOMOTOPY_MAX_STEP);
        } else {
            step /= 2.0;
            if step < HOMOTOPY_MIN_STEP {
                return false;
            }
        }
    }
    true
}

/// The first step of λ, the largest, and the smallest before the homotopy gives up.
pub(super) const HOMOTOPY_FIRST_STEP: f64 = 0.1;
pub(super) const HOMOTOPY_MAX_STEP: f64 = 0.5;
pub(super) const HOMOTOPY_MIN_STEP: f64 = 1e-4;

/// A scalar problem with its residual shifted by a constant: one stage of the homotopy.
pub(super) struct ShiftedScalar<'x> {
    pub(super) inner: &'x mut dyn ScalarProblem,
    pub(super) offset: f64,
}

impl ScalarProblem for ShiftedScalar<'_> {
    fn residual(&mut self, z: f64) -> Result<f64, SolveError> {
        Ok(self.inner.residual(z)? - self.offset)
    }

    fn derivative(&mut self) -> Option<Result<f64, SolveError>> {
        self.inner.derivative()
    }

    fn value(&self) -> f64 {
        self.inner.value()
    }
}

/// The damped Newton iteration of [`solve_scalar`]; returns the solution, which the target holds.
pub(super) fn newton_scalar(start: f64, f: &mut dyn ScalarProblem) -> Result<f64, SolveError> {
    let mut z = start;
    let mut r = f.residual(z)?;
    if !r.is_finite() {
        return Err(SolveError::Kind(FailureKind::NotFinite { value: r }));
    }
    let mut outcome = Err(SolveError::Kind(FailureKind::NoConvergence {
        iterations: NEWTON_MAX_ITERATIONS,
        residual: r.abs(),
    }));
    for iteration in 0..NEWTON_MAX_ITERATIONS {
        if r == 0.0 {
            outcome = Ok(z);
            break;
        }
        let quotient = |f: &mut dyn ScalarProblem| -> Result<f64, SolveError> {
            let h = f64::EPSILON.sqrt() * z.abs().max(1.0);
            Ok((f.residual(z + h)? - r) / h)
        };
        let d = match f.derivative() {
            // A derivative that vanishes exactly near a multiple root (`x - sin(x)` at 0, where
            // the equation's solution moves as the cube root of what drives it) says nothing
            // of the slope a step meets: the difference quotient over a small step does, when
            // the step it gives stays within the unknown's own scale. A longer one would jump
            // to a far root (`cos(x) = 0` from 0): that is left to bracketing from the start
            // value, which finds the nearest.
            Some(d) if d.as_ref().is_ok_and(|&d| d == 0.0) => {
                let d = quotient(f)?;
                if (r / d).abs() <= z.abs().max(1.0) { d } else { 0.0 }
            }
            Some(d) => d?,
            None => quotient(f)?,
        };
        if !d.is_finite() || d == 0.0 {
            outcome = Err(SolveError::Kind(FailureKind::Singular));
            break;
        }
        let step = -r / d;
        let mut lambda = 1.0;
        let (z_new, r_new) = loop {
            let z_new = z + lambda * step;
            let r_new = f.residual(z_new)?;
            if r_new.is_finite() && r_new.abs() <= (1.0 - ARMIJO * lambda) * r.abs() {
                break (z_new, r_new);
            }
            lambda *= 0.5;
            if lambda < 1e-10 {
                break (f64::NAN, f64::NAN);
            }
        };
        if z_new.is_nan() {
            // The residual cannot be reduced: at the level of rounding errors that means z
            // is the solution; otherwise Newton has failed.
            outcome = if step.abs() <= STALL_RTOL * z.abs() + STALL_ATOL {
                f.residual(z)?;
                Ok(z)
            } else {
                Err(SolveError::Kind(FailureKind::NoConvergence {
                    iterations: iteration + 1,
                    residual: r.abs(),
                }))
            };
            break;
        }
        // Judged on the full Newton step: a step the line search cut short is small because
        // the residual could not be reduced along it (a kink of `noEvent(if ...)` just ahead),
        // not because the root is near.
        let converged = step.abs() <= STEP_RTOL * z_new.abs() + STEP_ATOL;
        z = z_new;
        r = r_new;
        if converged {
            outcome = Ok(z);
            break;
        }
        outcome = Err(SolveError::Kind(FailureKind::NoConvergence {
            iterations: iteration + 1,
            residual: r.abs(),
        }));
    }
    outcome
}

/// A scalar implicit equation evaluated by the register code.
pub(super) struct InterpretedScalar<'x, 'm> {
    pub(super) m: &'x mut Machine,
    pub(super) mem: &'x mut Mem<'m>,
    pub(super) target: Slot,
    pub(super) residual: Code,
    pub(super) derivative: Option<Code>,
}

impl ScalarProblem for InterpretedScalar<'_, '_> {
    fn residual(&mut self, z: f64) -> Result<f64, SolveError> {
        self.mem.write(self.target, z);
        Ok(self.m.eval(self.residual, self.mem)?)
    }

    fn derivative(&mut self) -> Option<Result<f64, SolveError>> {
        let code = self.derivative?;
        Some(self.m.eval(code, self.mem).map_err(SolveError::from))
    }

    fn value(&self) -> f64 {
        self.mem.read(self.target)
    }
}

/// A scalar implicit equation evaluated by native code: segments with one result each.
pub(super) struct NativeScalar<'x, 'm> {
    pub(super) module: &'x CompiledModule,
    pub(super) mem: &'x mut Mem<'m>,
    pub(super) target: Slot,
    pub(super) residual: usize,
    pub(super) derivative: Option<usize>,
    pub(super) limit: u64,
}

impl ScalarProblem for NativeScalar<'_, '_> {
    fn residual(&mut self, z: f64) -> Result<f64, SolveError> {
        self.mem.write(self.target, z);
        let mut out = [0.0];
        self.mem.native(self.module, self.residual, &mut out, self.limit)?;
        Ok(out[0])
    }

    fn derivative(&mut self) -> Option<Result<f64, SolveError>> {
        let segment = self.derivative?;
        let mut out = [0.0];
        Some(
            self.mem
                .native(self.module, segment, &mut out, self.limit)
                .map(|()| out[0])
                .map_err(SolveError::from),
        )
    }

    fn value(&self) -> f64 {
        self.mem.read(self.target)
    }
}

/// What the loop solver needs of a torn algebraic loop; the register code and native code both
/// provide it, so that both back ends run the one iteration of `LoopSolver::run`.
pub(super) trait LoopProblem {
    /// The value tearing unknown `j` holds (the first guess).
    fn guess(&self, j: usize) -> f64;
    /// Writes the tearing values `t` into their slots, runs the inner assignments and
    /// evaluates the residuals into `f`.
    fn evaluate(&mut self, t: &[f64], f: &mut [f64]) -> Result<(), SolveError>;
    /// Evaluates the partial derivatives of the loop's symbolic Jacobian at the point
    /// evaluated last, in the order of [`eqm_compile::exec::LoopJacobian`] (the inner rows, then the
    /// residual rows), into `out`. Only called when the loop has a symbolic Jacobian.
    fn partials(&mut self, out: &mut [f64]) -> Result<(), SolveError>;
    /// The value inner unknown `k` holds (the first guess of the untorn solve).
    fn inner_value(&self, k: usize) -> f64;
    /// Writes the tearing values and then the inner values `z` into their slots and evaluates
    /// the untorn residuals (those of the inner equations as written, then the torn ones) into
    /// `f`. Only called when the loop has untorn residuals.
    fn evaluate_untorn(&mut self, z: &[f64], f: &mut [f64]) -> Result<(), SolveError>;
}

/// The compiled code of an algebraic loop: tearing slots, inner assignments, residuals, the
/// partial derivatives in the order of [`eqm_compile::exec::LoopJacobian`], and the residuals
/// of the inner equations as written (empty when the loop has none).
#[derive(Debug, Clone)]
pub(super) struct LoopCode {
    /// The nominal values given by expressions of parameters: the index of the tearing unknown
    /// and the expression's code, evaluated once the parameters are bound.
    pub(super) nominal: Vec<(usize, Code)>,
    pub(super) tearing: Vec<Slot>,
    pub(super) inner: Vec<(Slot, Code)>,
    pub(super) residuals: Vec<Code>,
    /// The partial derivatives as one unit, which computes what they share once.
    pub(super) partials: Shared,
    pub(super) untorn: Vec<Code>,
}

/// An algebraic loop evaluated by the register code.
pub(super) struct InterpretedLoop<'x, 'm> {
    pub(super) code: &'x LoopCode,
    pub(super) m: &'x mut Machine,
    pub(super) mem: &'x mut Mem<'m>,
}

impl LoopProblem for InterpretedLoop<'_, '_> {
    fn guess(&self, j: usize) -> f64 {
        self.mem.read(self.code.tearing[j])
    }

    fn evaluate(&mut self, t: &[f64], f: &mut [f64]) -> Result<(), SolveError> {
        for (slot, value) in self.code.tearing.iter().zip(t) {
            self.mem.write(*slot, *value);
        }
        for &(slot, code) in &self.code.inner {
            let v = self.m.eval(code, self.mem)?;
            self.mem.write(slot, v);
        }
        for (r, code) in f.iter_mut().zip(&self.code.residuals) {
            *r = self.m.eval(*code, self.mem)?;
        }
        Ok(())
    }

    fn partials(&mut self, out: &mut [f64]) -> Result<(), SolveError> {
        self.m.eval_shared(&self.code.partials, self.mem, out)?;
        Ok(())
    }

    fn inner_value(&self, k: usize) -> f64 {
        self.mem.read(self.code.inner[k].0)
    }

    fn evaluate_untorn(&mut self, z: &[f64], f: &mut [f64]) -> Result<(), SolveError> {
        let slots = self.code.tearing.iter().chain(self.code.inner.iter().map(|(s, _)| s));
        for (slot, value) in slots.zip(z) {
            self.mem.write(*slot, *value);
        }
        let codes = self.code.untorn.iter().chain(&self.code.residuals);
        for (r, code) in f.iter_mut().zip(codes) {
            *r = self.m.eval(*code, self.mem)?;
        }
        Ok(())
    }
}

/// An algebraic loop evaluated by native code: one segment computes the inner assignments and
/// the residuals, another the partial derivatives.
pub(super) struct NativeLoop<'x, 'm> {
    pub(super) module: &'x CompiledModule,
    pub(super) tearing: &'x [Slot],
    pub(super) inner: &'x [(Slot, Code)],
    pub(super) mem: &'x mut Mem<'m>,
    pub(super) evaluate: usize,
    pub(super) partials: Option<usize>,
    pub(super) untorn: Option<usize>,
    pub(super) limit: u64,
}

impl LoopProblem for NativeLoop<'_, '_> {
    fn guess(&self, j: usize) -> f64 {
        self.mem.read(self.tearing[j])
    }

    fn evaluate(&mut self, t: &[f64], f: &mut [f64]) -> Result<(), SolveError> {
        for (slot, value) in self.tearing.iter().zip(t) {
            self.mem.write(*slot, *value);
        }
        Ok(self.mem.native(self.module, self.evaluate, f, self.limit)?)
    }

    fn partials(&mut self, out: &mut [f64]) -> Result<(), SolveError> {
        match self.partials {
            Some(segment) => Ok(self.mem.native(self.module, segment, out, self.limit)?),
            None => Ok(()),
        }
    }

    fn inner_value(&self, k: usize) -> f64 {
        self.mem.read(self.inner[k].0)
    }

    fn evaluate_untorn(&mut self, z: &[f64], f: &mut [f64]) -> Result<(), SolveError> {
        let slots = self.tearing.iter().chain(self.inner.iter().map(|(s, _)| s));
        for (slot, value) in slots.zip(z) {
            self.mem.write(*slot, *value);
        }
        match self.untorn {
            Some(segment) => Ok(self.mem.native(self.module, segment, f, self.limit)?),
            None => Ok(()),
        }
    }
}

/// Which partial derivatives an inner value or residual has (see [`LoopVar`]).
pub(super) type Pattern = Vec<Vec<LoopVar>>;

/// The Newton and LU solver of one algebraic loop with its buffers, shared by both back ends.
#[derive(Debug, Clone)]
pub(super) struct LoopSolver {
    pub(super) n: usize,
    pub(super) linear: bool,
    /// The non-zero partial derivatives of the inner values and of the residuals, when the
    /// loop has a symbolic Jacobian; their values come in this order.
    pub(super) pattern: Option<(Pattern, Pattern)>,
    pub(super) partials: Vec<f64>,
    /// Current point and its residuals; the trial point and its residuals.
    pub(super) t: Vec<f64>,
    pub(super) f: Vec<f64>,
    pub(super) trial: Vec<f64>,
    pub(super) f_trial: Vec<f64>,
    pub(super) step: DVector<f64>,
    /// `dz[k*n + j]`: the derivative of inner unknown `k` with respect to tearing unknown `j`.
    pub(super) dz: Vec<f64>,
    pub(super) jm: DMatrix<f64>,
    pub(super) pivots: Vec<usize>,
    /// The guesses a solve started from (the homotopy's starting point).
    pub(super) start: Vec<f64>,
    /// Whether a Jacobian of this loop has been factored: until then, a guess that already
    /// solves the loop is checked for a regular Jacobian, so that a consistent but singular
    /// system (infinitely many solutions) is an error, not one of its solutions picked silently.
    pub(super) regular: bool,
    /// The magnitude of each tearing unknown (its `nominal`), the unit of the trust region.
    pub(super) nominal: Vec<f64>,
    /// The Jacobian kept unfactored, and the steepest descent, for the trust-region method.
    pub(super) jac: DMatrix<f64>,
    pub(super) descent: Vec<f64>,
    /// The solves of this loop that plain Newton did not finish, when there were any.
    pub(super) recoveries: Option<Recoveries>,
    /// The solver of the untorn equations (see [`LoopSolver::run_untorn`]) and the values it
    /// starts from, when the loop has them.
    pub(super) untorn: Option<Box<LoopSolver>>,
    pub(super) untorn_start: Vec<f64>,
    /// A linear loop's last regular factorisation with the partial derivatives it came from
    /// (see [`super::factors`]).
    pub(super) factors: Option<Box<super::factors::Factors>>,
    /// Whether a loop that Newton and the trust-region method did not solve follows the
    /// continuation on its start values ([`LoopSolver::start_path`]): at the initialization only.
    pub(super) continuation: bool,
}

/// A loop with its residuals shifted by constants and its own first guesses: one stage of the
/// homotopy.
pub(super) struct ShiftedLoop<'x> {
    pub(super) inner: &'x mut dyn LoopProblem,
    pub(super) from: &'x [f64],
    pub(super) offset: &'x [f64],
}

impl LoopProblem for ShiftedLoop<'_> {
    fn guess(&self, j: usize) -> f64 {
        self.from[j]
    }

    fn evaluate(&mut self, t: &[f64], f: &mut [f64]) -> Result<(), SolveError> {
        self.inner.evaluate(t, f)?;
        for (r, o) in f.iter_mut().zip(self.offset) {
            *r -= o;
        }
        Ok(())
    }

    fn partials(&mut self, out: &mut [f64]) -> Result<(), SolveError> {
        self.inner.partials(out)
    }

    fn inner_value(&self, k: usize) -> f64 {
        self.inner.inner_value(k)
    }

    fn evaluate_untorn(&mut self, z: &[f64], f: &mut [f64]) -> Result<(), SolveError> {
        self.inner.evaluate_untorn(z, f)
    }
}

impl LoopSolver {
    pub(super) fn new(b: &eqm_compile::exec::LoopBlock) -> LoopSolver {
        let n = b.tearing.len();
        let pattern = b.jacobian.as_ref().map(|j| {
            let rows = |list: &[Vec<(LoopVar, ExprId)>]| -> Pattern {
                list.iter().map(|row| row.iter().map(|(lv, _)| *lv).collect()).collect()
            };
            (rows(&j.inner), rows(&j.residuals))
        });
        let count = pattern
            .as_ref()
            .map_or(0, |(a, b)| a.iter().chain(b).map(Vec::len).sum());
        LoopSolver {
            n,
            linear: b.linear,
            pattern,
            partials: vec![0.0; count],
            t: vec![0.0; n],
            f: vec![0.0; n],
            trial: vec![0.0; n],
            f_trial: vec![0.0; n],
            step: DVector::zeros(n),
            dz: vec![0.0; b.inner.len() * n],
            jm: DMatrix::zeros(n, n),
            pivots: vec![0; n],
            start: vec![0.0; n],
            regular: false,
            nominal: b.nominal.clone(),
            jac: DMatrix::zeros(n, n),
            descent: vec![0.0; n],
            recoveries: None,
            untorn: b.untorn.as_ref().map(|_| Box::new(LoopSolver::untorn(b))),
            untorn_start: b
                .untorn
                .as_ref()
                .map_or_else(Vec::new, |_| vec![0.0; n + b.inner.len()]),
            factors: None,
            continuation: false,
        }
    }

    /// Evaluates the torn residuals at `trial` into `f_trial`; false when one is not finite.
    pub(super) fn evaluate(&mut self, problem: &mut dyn LoopProblem) -> Result<bool, SolveError> {
        problem.evaluate(&self.trial, &mut self.f_trial)?;
        Ok(self.f_trial.iter().all(|r| r.is_finite()))
    }

    /// Makes the trial point the current one.
    pub(super) fn accept(&mut self) {
        std::mem::swap(&mut self.t, &mut self.trial);
        std::mem::swap(&mut self.f, &mut self.f_trial);
    }

    /// The Jacobian of the torn residuals at the current point (whose values the slots hold)
    /// into `jm`; false when an entry is not finite.
    pub(super) fn jacobian(&mut self, problem: &mut dyn LoopProblem) -> Result<bool, SolveError> {
        let n = self.n;
        if self.pattern.is_some() {
            problem.partials(&mut self.partials)?;
            self.assemble();
        } else {
            // Forward differences, one column per tearing unknown.
            for j in 0..n {
                self.trial.copy_from_slice(&self.t);
                let h = f64::EPSILON.sqrt() * self.t[j].abs().max(1.0);
                self.trial[j] += h;
                self.evaluate(problem)?;
                for i in 0..n {
                    self.jm[(i, j)] = (self.f_trial[i] - self.f[i]) / h;
                }
            }
        }
        Ok(self.jm.iter().all(|v| v.is_finite()))
    }

    /// The Jacobian of the torn residuals into `jm` from the symbolic partial derivatives in
    /// `partials`, by the chain rule through the inner unknowns (`dz`).
    pub(super) fn assemble(&mut self) {
        let n = self.n;
        let Some((inner, residuals)) = &self.pattern else {
            return;
        };
        let mut values = self.partials.iter();
        self.dz.fill(0.0);
        for (k, row) in inner.iter().enumerate() {
            for (&lv, &d) in row.iter().zip(&mut values) {
                let (before, row) = self.dz.split_at_mut(k * n);
                match lv {
                    LoopVar::Tearing(j) => row[j as usize] += d,
                    LoopVar::Inner(l) => {
                        let dl = &before[l as usize * n..l as usize * n + n];
                        for j in 0..n {
                            row[j] += d * dl[j];
                        }
                    }
                }
            }
        }
        self.jm.fill(0.0);
        for (i, row) in residuals.iter().enumerate() {
            for (&lv, &d) in row.iter().zip(&mut values) {
                match lv {
                    LoopVar::Tearing(j) => self.jm[(i, j as usize)] += d,
                    LoopVar::Inner(k) => {
                        for j in 0..n {
                            self.jm[(i, j)] += d * self.dz[k as usize * n + j];
                        }
                    }
                }
            }
        }
    }

    /// LU factorisation of `jm` in place with partial pivoting; false when it is singular.
    pub(super) fn factor(&mut self) -> bool {
        let n = self.n;
        let scale = self.jm.iter().fold(0.0f64, |a, v| a.max(v.abs()));
        if scale == 0.0 {
            return false;
        }
        for c in 0..n {
            let mut p = c;
            for r in c + 1..n {
                if self.jm[(r, c)].abs() > self.jm[(p, c)].abs() {
                    p = r;
                }
            }
            if self.jm[(p, c)].abs() <= scale * 1e-14 {
                return false;
            }
            self.pivots[c] = p;
            if p != c {
                self.jm.swap_rows(p, c);
            }
            let pivot = self.jm[(c, c)];
            for r in c + 1..n {
                let l = self.jm[(r, c)] / pivot;
                self.jm[(r, c)] = l;
                if l != 0.0 {
                    for k in c + 1..n {
                        let u = self.jm[(c, k)];
                        self.jm[(r, k)] -= l * u;
                    }
                }
            }
        }
        true
    }

    /// The Newton step `-J⁻¹ f` into `step`, with `jm` factored.
    pub(super) fn solve(&mut self) -> bool {
        let n = self.n;
        for i in 0..n {
            self.step[i] = -self.f[i];
        }
        for c in 0..n {
            self.step.swap_rows(c, self.pivots[c]);
        }
        self.jm.solve_lower_triangular_with_diag_mut(&mut self.step, 1.0)
            && self.jm.solve_upper_triangular_mut(&mut self.step)
            && self.step.iter().all(|v| v.is_finite())
    }

    /// Solves the loop, starting from the values the tearing slots hold: Newton; when that
    /// does not converge, the trust-region method of [`LoopSolver::dogleg`]; when that does not
    /// either, at the initialization the continuation of [`LoopSolver::start_path`], then the
    /// homotopy of [`homotopy_steps`] from the same start. A solve that needed more
    /// than Newton is counted in `recoveries`. When the torn residuals cannot be evaluated at
    /// the start or none of these solves them, a loop with untorn residuals is solved by
    /// [`LoopSolver::run_untorn`].
    pub(super) fn run(&mut self, problem: &mut dyn LoopProblem) -> Result<(), SolveError> {
        for j in 0..self.n {
            let guess = problem.guess(j);
            self.start[j] = if guess.is_finite() { guess } else { 0.0 };
        }
        if self.untorn.is_some() {
            self.keep_untorn_start(problem);
        }
        let failure = match self.newton(problem) {
            Ok(()) => return Ok(()),
            Err(e @ SolveError::Kind(FailureKind::NotFinite { .. })) => return self.run_untorn(problem, e),
            Err(e) if !may_recover(&e) => return Err(e),
            Err(e) => e,
        };
        let newton = NewtonFailure::of(&failure);
        match self.dogleg(problem) {
            Ok(iterations) => {
                let method = RecoveryMethod::TrustRegion;
                Recoveries::note(
                    &mut self.recoveries,
                    Recovery {
                        newton,
                        method,
                        iterations,
                    },
                );
                return Ok(());
            }
            Err(e) if !may_recover(&e) => return Err(e),
            Err(_) => {}
        }
        if self.continuation
            && let Some(steps) = self.start_path(problem)
        {
            let method = RecoveryMethod::Continuation;
            Recoveries::note(
                &mut self.recoveries,
                Recovery {
                    newton,
                    method,
                    iterations: steps,
                },
            );
            return Ok(());
        }
        let mut from = self.start.clone();
        let mut f0 = vec![0.0; self.n];
        problem.evaluate(&from, &mut f0)?;
        if !f0.iter().all(|v| v.is_finite()) {
            return self.run_untorn(problem, failure);
        }
        let mut offset = vec![0.0; self.n];
        let mut stages = 0;
        let found = homotopy_steps(|lambda| {
            stages += 1;
            for (o, f) in offset.iter_mut().zip(&f0) {
                *o = (1.0 - lambda) * f;
            }
            let mut shifted = ShiftedLoop {
                inner: &mut *problem,
                from: &from,
                offset: &offset,
            };
            let solved = self.newton(&mut shifted).is_ok();
            if solved {
                from.copy_from_slice(&self.t);
            }
            solved
        });
        if !found {
            return self.run_untorn(problem, failure);
        }
        let method = RecoveryMethod::Homotopy;
        Recoveries::note(
            &mut self.recoveries,
            Recovery {
                newton,
                method,
                iterations: stages,
            },
        );
        Ok(())
    }

    /// The damped Newton iteration of [`LoopSolver::run`], starting from the problem's guesses;
    /// on success `t` is the solution, which the slots hold.
    pub(super) fn newton(&mut self, problem: &mut dyn LoopProblem) -> Result<(), SolveError> {
        let n = self.n;
        for j in 0..n {
            let guess = problem.guess(j);
            self.trial[j] = if guess.is_finite() { guess } else { 0.0 };
        }
        if !self.evaluate(problem)? {
            let value = self
                .f_trial
                .iter()
                .copied()
                .find(|v| !v.is_finite())
                .unwrap_or(f64::NAN);
            return Err(SolveError::Kind(FailureKind::NotFinite { value }));
        }
        self.accept();
        let initial = max_abs(&self.f);
        let mut norm = squared(&self.f);
        for iteration in 0..NEWTON_MAX_ITERATIONS {
            if norm == 0.0 {
                if self.regular {
                    return Ok(());
                }
                let Some(regular) = self.factored_jacobian(problem)? else {
                    return Err(SolveError::Kind(FailureKind::Singular));
                };
                if regular {
                    self.regular = true;
                    return Ok(());
                }
                if self.singular_only_by_idle_unknowns() {
                    // The slots must hold the solution again: a Jacobian by difference
                    // quotients evaluated the loop at other points.
                    self.trial.copy_from_slice(&self.t);
                    self.evaluate(problem)?;
                    return Ok(());
                }
                return Err(SolveError::Kind(FailureKind::Singular));
            }
            let Some(regular) = self.factored_jacobian(problem)? else {
                return Err(SolveError::Kind(FailureKind::Singular));
            };
            let idle = !regular;
            if idle {
                // Singular: the step of the unknowns that enter the equations here, when
                // only unknowns that do not enter make it so.
                if !self.singular_only_by_idle_unknowns() {
                    return Err(SolveError::Kind(FailureKind::Singular));
                }
            } else if !self.solve() {
                return Err(SolveError::Kind(FailureKind::Singular));
            } else {
                self.regular = true;
            }
            // A linear loop is solved by the first full step; Newton's line search is only
            // for nonlinear ones (and for a loop wrongly believed linear).
            let first_linear = self.linear && iteration == 0;
            let mut lambda = 1.0;
            loop {
                for j in 0..n {
                    self.trial[j] = self.t[j] + lambda * self.step[j];
                }
                let finite = self.evaluate(problem)?;
                if finite && (first_linear || squared(&self.f_trial) <= (1.0 - 2.0 * ARMIJO * lambda) * norm) {
                    break;
                }
                lambda *= 0.5;
                if lambda < 1e-10 {
                    let stalled = (0..n).all(|j| self.step[j].abs() <= STALL_RTOL * self.t[j].abs() + STALL_ATOL);
                    if stalled && !idle {
                        // The residual is at the level of rounding: the current point is the
                        // solution, and the slots must hold its values again.
                        self.trial.copy_from_slice(&self.t);
                        self.evaluate(problem)?;
                        return Ok(());
                    }
                    return Err(SolveError::Kind(FailureKind::NoConvergence {
                        iterations: iteration + 1,
                        residual: norm.sqrt(),
                    }));
                }
            }
            // Judged on the full Newton step, as in the scalar iteration.
            let converged = (0..n).all(|j| self.step[j].abs() <= STEP_RTOL * self.trial[j].abs() + STEP_ATOL);
            self.accept();
            norm = squared(&self.f);
            if idle && norm != 0.0 && max_abs(&self.f) > super::idle::IDLE_RESIDUAL * initial {
                // A step that kept the idle unknowns cannot be judged by its length: the
                // equations it did not pivot on must hold too, or the loop has no solution
                // near here.
                if converged {
                    return Err(SolveError::Kind(FailureKind::Singular));
                }
                continue;
            }
            if converged || norm == 0.0 || (first_linear && max_abs(&self.f) <= 1e-10 * initial) {
                return Ok(());
            }
        }
        Err(SolveError::Kind(FailureKind::NoConvergence {
            iterations: NEWTON_MAX_ITERATIONS,
            residual: norm.sqrt(),
        }))
    }
}

pub(super) fn squared(v: &[f64]) -> f64 {
    v.iter().map(|x| x * x).sum()
}

pub(super) fn max_abs(v: &[f64]) -> f64 {
    v.iter().fold(0.0f64, |a, x| a.max(x.abs()))
}
