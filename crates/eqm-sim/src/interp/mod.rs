//! The reference interpreter of an [`ExecProgram`]: the oracle the JIT is tested against.
//!
//! Input: an [`ExecProgram`] and the evaluation arrays `t, x, p, dx, work` of its layout.
//! Output: the values the program's instructions define: dependent parameters
//! ([`Interpreter::parameters`]), start values ([`Interpreter::start_values`]), state
//! derivatives and every algebraic variable ([`Interpreter::rhs`]), and the variables alias
//! elimination removed ([`Interpreter::outputs`]); or an [`EvalFailure`] naming the equations,
//! the variables and the time (a singular Jacobian, Newton without convergence, a value that is
//! not finite, a failed `assert`). [`crate::instance::Instance`] binds an interpreter to a
//! parameter vector and implements [`OdeRhs`], the shape integrators call. Start values can be
//! replaced for a run ([`Interpreter::set_start_values`]) without compiling anything again.
//!
//! [`Interpreter::new`] compiles every expression of the program once into a small register
//! code: each node of an expression becomes one operation, shared subexpressions are computed
//! once per evaluation, `if` evaluates only the branch it takes, and statements (`if`, `for`,
//! `while`, `break`, `return`) become jumps. Built-in functions are called through the function
//! pointers of the built-in table and operators through [`eqm_ir::symbolic::eval`], the same Rust
//! functions the JIT calls, so both agree bit for bit. User functions run on an explicit frame
//! stack, so deep recursion cannot overflow the Rust stack; loops and recursion have limits, so
//! evaluation always ends. Evaluation allocates nothing once the buffers have grown to their
//! working size: Newton and LU buffers are allocated when the interpreter is built.
//!
//! Implicit equations are solved by Newton's method with a backtracking line search, starting
//! from the value the unknown holds (so successive calls warm-start); linear loops take one
//! Newton step (an LU solve with partial pivoting, the triangular solves by nalgebra) and fall
//! back to Newton if the result does not satisfy the equations; nonlinear loops run Newton on
//! the torn residuals with the Jacobian assembled by the chain rule from the program's symbolic
//! partial derivatives (difference quotients where those could not be built). Where Newton
//! stops, a loop falls back to Powell's hybrid method (`dogleg`), at the initialization to the
//! continuation on its start values (`start_path`, along the path follower of `path`), then to
//! a Newton homotopy, and a loop whose torn form leaves its domain to its equations as written
//! (`untorn`); a scalar equation at the initialization to the continuation, and to the
//! homotopy and, at the initialization, a bracketing search. A solve that fails is tried again
//! from the block's last solution and first start (`restart`). Which method solved a block is
//! counted ([`Interpreter::recoveries`]).
//!
//! The same iterations drive native code. [`NativeCode`] compiles the program's
//! instructions with the JIT; once attached ([`Interpreter::attach_native`]), every compiled
//! instruction runs natively: a run of explicit assignments is one call, and a Newton block or
//! a loop is solved by the very functions the interpreter uses (`solve_scalar`,
//! `LoopSolver::run`), which see the equations only through the `ScalarProblem` and
//! `LoopProblem` traits, implemented once by the register code and once by native
//! residuals and partial derivatives. Values a run computes are checked to be finite after it,
//! and failures of compiled code (an `assert`, `terminate`, a zero `for` step, the iteration
//! and recursion limits) come back as the [`FailureKind`] the register code reports, so both
//! back ends give the same bits and the same failures. Instructions the JIT could not compile
//! stay with the register code. Native code is optional: the interpreter alone remains the
//! reference. This module deliberately does not integrate (integrators call [`OdeRhs`]) and does
//! not decide events: it evaluates the event program's surfaces and expressions on request
//! (`hybrid` drives them); those and the start-value program are always interpreted.

use eqm_compile::dae::Origin;
use eqm_compile::exec::{ExecProgram, Instr, LoopVar, ParamCondition};
use eqm_diag::Diagnostic;
use eqm_diag::source::Span;
use eqm_ir::builtins::{Builtin, Eval};
use eqm_ir::expr::{BinOp, Callee, ExprArena, ExprId, FxHashMap, Node, UnOp, VarId};
use eqm_ir::failure::{DEFAULT_ITERATION_LIMIT, EvalFailure, FailureKind, FailureSite, MAX_CALL_DEPTH};
use eqm_ir::flat::{Place, Statement};
use eqm_ir::slot::Slot;
use eqm_ir::symbolic::eval::{binary, unary};
use nalgebra::{DMatrix, DVector};

mod code;
mod dogleg;
mod events;
mod factors;
mod idle;
mod jacobian;
mod machine;
mod new;
mod objects;
pub(crate) mod path;
mod perturbed;
mod restart;
mod solve;
mod start_path;
mod untorn;

use crate::native::{NativeCode, NativeStep};
use code::*;
pub use dogleg::{NewtonFailure, Recoveries, Recovery, RecoveryMethod};
use eqm_jit::{CompiledModule, JitError};
use machine::*;
use restart::*;
use solve::*;
use start_path::*;
use std::sync::Arc;

/// Newton iterations before an implicit equation or a loop is reported as not converging.
pub const NEWTON_MAX_ITERATIONS: u32 = 50;

/// A Newton step `s` at point `z` is converged when `|s| <= STEP_RTOL*|z| + STEP_ATOL` (for
/// loops: in every component): Newton converges quadratically, so the error after such a step
/// is far below it. The absolute part is small so that variables of small magnitude keep their
/// relative accuracy; a root at 0 ends with a residual of exactly 0 or a stalled line search.
pub const STEP_RTOL: f64 = 1e-10;
pub const STEP_ATOL: f64 = 1e-14;
/// When the line search cannot reduce the residual (33 halvings of the step), a full step
/// `|s| <= STALL_RTOL*|z| + STALL_ATOL` means the residual is at the level of rounding errors,
/// and the current point is accepted; a larger one is a failure to converge.
pub const STALL_RTOL: f64 = 1e-6;
pub const STALL_ATOL: f64 = 1e-10;
/// Sufficient decrease of the line search: a trial point with step factor `λ` is accepted when
/// `|r_new| <= (1 - ARMIJO*λ)·|r|` (scalar) or `‖r_new‖² <= (1 - 2·ARMIJO*λ)·‖r‖²` (loops).
pub const ARMIJO: f64 = 1e-4;

/// A right-hand side `dx = f(t, x)`: what an integrator needs of a model.
pub trait OdeRhs {
    /// The number of states.
    fn dim(&self) -> usize;
    /// Computes `dx` at `(t, x)`.
    fn rhs(&mut self, t: f64, x: &[f64], dx: &mut [f64]) -> Result<(), EvalFailure>;
}

/// The reference interpreter of one program; see the module documentation.
#[derive(Clone)]
pub struct Interpreter<'p> {
    program: &'p ExecProgram,
    /// Whether a scalar equation that Newton and the homotopy do not solve is searched for a
    /// bracketed root (the initialization, whose guesses are only start values; never during
    /// integration, where a root far from the last solution is another branch).
    bracketing: bool,
    m: Machine,
    /// The compiled expressions of the program, shared by the instances of one program (the
    /// integrator's and the rows'): they are read-only, except where given start values
    /// replace steps of the right-hand side (a copy is made then).
    code: Arc<Tables>,
    /// The solver of each algebraic loop (shared with native code).
    loops: Vec<LoopSolver>,
    /// The derivatives of the last successful evaluation: Newton iterations and loops that
    /// compute a derivative start from there.
    dx_guess: Vec<f64>,
    /// Native code for the instructions it could compile, when attached (shared by the
    /// instances of one program: the code is read-only).
    native: Option<Arc<NativeCode>>,
    finite_checks: FiniteChecks,
    /// Whether the right-hand side has iterations (scalar Newton blocks, loops), which start
    /// from `dx_guess`, or algorithm sections, which may read derivatives before assigning them.
    iterates: bool,
    /// The symbolic Jacobian's partial derivatives and the buffers of its chain rule, when the
    /// program has one.
    /// Boxed: it is taken out and put back around every Jacobian, and a pointer moves faster
    /// than the buffers' handles.
    jacobian: Option<Box<JacobianCode>>,
    /// Start values a run overrides: for each entry of the start-value program, the value that
    /// replaces its expression.
    start_overrides: Vec<Option<f64>>,
    /// The right-hand-side steps replaced by given start values, with the steps they replaced.
    given: Vec<(usize, Step)>,
    /// The scalar implicit equations that plain Newton did not solve, by right-hand-side step,
    /// in the order first met (few: a solve that needs more than Newton is rare).
    scalar_recoveries: Vec<(usize, Recoveries)>,
    /// The points each scalar Newton block and each loop restarts from after a failed solve.
    scalar_sound: Vec<SoundPoints>,
    loop_sound: Vec<SoundPoints>,
}

/// The compiled expressions of a program, by where they are used.
#[derive(Clone)]
struct Tables {
    params: Vec<(Slot, Code)>,
    conditions: Vec<Code>,
    starts: Vec<(Slot, Code)>,
    outputs: Vec<(Slot, Code)>,
    rhs: Vec<Step>,
    algorithms: Vec<AlgorithmCode>,
    /// The code of each algebraic loop.
    loop_code: Vec<LoopCode>,
    /// The zero-crossing functions of the event program, in its order.
    surfaces: Vec<Code>,
    /// The when-conditions, action values and assertion conditions, sorted by expression.
    event_exprs: Vec<(ExprId, Code)>,
}

/// What the interpreter keeps for the symbolic Jacobian.
#[derive(Clone)]
struct JacobianCode {
    /// The partial derivatives as one unit, which computes what they share once.
    partials: code::Shared,
    values: Vec<f64>,
    tangents: jacobian::Tangents,
}

/// Where [`Interpreter::jacobian`] writes: `∂f/∂x`, the invariants `g` and `G = ∂g/∂x`, each
/// only when asked for.
#[derive(Default)]
pub struct JacobianOut<'a> {
    pub f_x: Option<&'a mut DMatrix<f64>>,
    /// `∂f/∂x` as the values of its pattern's entries row by row
    /// ([`eqm_compile::jacobian::ExecJacobian::rows`]).
    pub f_values: Option<&'a mut [f64]>,
    pub g: Option<&'a mut [f64]>,
    pub g_x: Option<&'a mut DMatrix<f64>>,
    /// The Jacobian of the invariants' rates (see [`eqm_compile::jacobian::ExecJacobian::rates`]);
    /// left untouched when the program has none.
    pub rate_x: Option<&'a mut DMatrix<f64>>,
    /// The values of the extra expressions (see [`eqm_compile::jacobian::ExecJacobian::extra`]).
    pub extra: Option<&'a mut [f64]>,
}

/// When the right-hand side checks that values are finite.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FiniteChecks {
    /// After every assignment: the first non-finite value is reported with its equation.
    #[default]
    EachAssignment,
    /// Only the derivatives, after the whole evaluation; when one is not finite, or anything
    /// fails, the evaluation is repeated with [`FiniteChecks::EachAssignment`] so the failure
    /// reported is the same. For the integrator's evaluations, where values that do not reach a
    /// derivative cannot change the solution (the rows written are still checked in full): it
    /// spares a check per assignment, which costs as much as a native assignment itself.
    Derivatives,
}

impl<'p> Interpreter<'p> {
    /// Replaces the start values of variables `values` (each with its new value) for every
    /// evaluation from now on, and forgets earlier replacements. A start value is read by the
    /// start-value program (states' start values and every iteration's first guess) and, in an
    /// initialization problem, by the assignment of a fixed or assumed start value, which
    /// becomes the given value. Instructions whose value is given run in the interpreter, not
    /// in native code. The value before the first event of a discrete variable, `pre(v)`, is
    /// `v`'s start value (Modelica's rule), so it is replaced with it: an algorithm section
    /// starts from `pre(v)` for each discrete variable it assigns, and a run resumed after a
    /// change of structure would otherwise begin from the declared start value instead of the
    /// value carried over.
    pub fn set_start_values(&mut self, values: &[(VarId, f64)]) {
        for (k, step) in self.given.drain(..) {
            Arc::make_mut(&mut self.code).rhs[k] = step;
        }
        self.start_overrides.fill(None);
        let program = self.program;
        let pre_of = pre_variables(program);
        for &(var, value) in values {
            let pre = pre_of.get(&var).map_or(&[][..], Vec::as_slice);
            for (k, a) in program.start_program().iter().enumerate() {
                if a.var == var || pre.contains(&a.var) {
                    self.start_overrides[k] = Some(value);
                }
            }
            for (k, instr) in program.rhs().iter().enumerate() {
                let Instr::Assign { target, eq, .. } = instr else {
                    continue;
                };
                let is_start = program.equations().get(*eq).is_some_and(
                    |e| matches!(e.origin, Origin::FixedStart { var: v } | Origin::AssumedStart { var: v } if v == var),
                );
                if is_start {
                    let given = Step::Given { target: *target, value };
                    self.given
                        .push((k, std::mem::replace(&mut Arc::make_mut(&mut self.code).rhs[k], given)));
                }
            }
        }
    }

    /// Makes this interpreter use the external objects of `other` (another program of the same
    /// run, such as its initialization problem) from its next evaluation of the parameters on:
    /// a constructor called with the same arguments then gives the object `other` made, so
    /// what the object remembers is the same for both.
    pub fn share_objects(&mut self, other: &Interpreter<'_>) {
        self.m.objects = other.m.objects.clone();
    }

    /// Whether the run has created external objects, whose state lives in C code.
    pub fn has_external_objects(&self) -> bool {
        !self.m.objects.lock().map_or(true, |objects| objects.is_empty())
    }

    /// The derivatives iterations start from (see `dx_guess`), to keep with a run's state.
    pub fn derivative_guess(&mut self) -> &mut Vec<f64> {
        &mut self.dx_guess
    }

    /// Evaluates with `native` from now on: every instruction it compiled, and the outputs
    /// program if it compiled that. `native` must have been compiled from this program.
    pub fn attach_native(&mut self, native: Arc<NativeCode>) {
        self.native = Some(native);
    }

    /// The native code attached, if any.
    pub fn native(&self) -> Option<&NativeCode> {
        self.native.as_deref()
    }

    /// Whether the program has a symbolic Jacobian to evaluate.
    pub fn has_jacobian(&self) -> bool {
        self.jacobian.is_some()
    }

    pub fn program(&self) -> &'p ExecProgram {
        self.program
    }

    /// Changes how many loop iterations and function calls one evaluation may run
    /// ([`DEFAULT_ITERATION_LIMIT`]).
    pub fn set_iteration_limit(&mut self, limit: u64) {
        self.m.iteration_limit = limit;
    }

    /// Lets scalar equations that Newton and the homotopy do not solve be searched for a
    /// bracketed root near the guess (for the initialization problem).
    pub fn set_bracketing(&mut self, on: bool) {
        self.bracketing = on;
        for l in &mut self.loops {
            l.set_continuation(on);
        }
    }

    /// Checks the lengths of the arrays against the program's layout.
    fn check(&self, t: f64, arrays: &[(&'static str, usize, usize)]) -> Result<(), EvalFailure> {
        for &(array, expected, found) in arrays {
            if expected != found {
                return Err(EvalFailure {
                    time: t,
                    kind: FailureKind::Dimension { array, expected, found },
                    site: FailureSite::Call,
                });
            }
        }
        Ok(())
    }

    /// Checks the four arrays of an evaluation at time `t`.
    fn check_all(&self, t: f64, x: &[f64], p: &[f64], dx: &[f64], work: &[f64]) -> Result<(), EvalFailure> {
        let layout = self.program.layout();
        if x.len() == layout.states
            && p.len() == layout.params
            && dx.len() == layout.states
            && work.len() == layout.work
        {
            return Ok(());
        }
        self.check(
            t,
            &[
                ("x", layout.states, x.len()),
                ("p", layout.params, p.len()),
                ("dx", layout.states, dx.len()),
                ("work", layout.work, work.len()),
            ],
        )
    }

    fn fault(&self, fault: Fault) -> FailureKind {
        // The text of message `k` with the values kept when it failed.
        let message = |k: u32| {
            let mut values = self.m.fault_values.iter().copied();
            self.m
                .messages
                .get(k as usize)
                .map(|(m, _)| m.render(&mut |_| values.next()))
                .unwrap_or_default()
        };
        match fault {
            Fault::Assert { message: k, span } => FailureKind::Assert {
                message: message(k),
                span,
            },
            Fault::Terminate { message: k, span } => FailureKind::Terminate {
                message: message(k),
                span,
            },
            Fault::IterationLimit => FailureKind::IterationLimit {
                limit: self.m.iteration_limit,
            },
            Fault::RecursionLimit => FailureKind::RecursionLimit { limit: MAX_CALL_DEPTH },
            Fault::ZeroStep { span } => FailureKind::ZeroStep { span },
            Fault::External { external } => FailureKind::External {
                function: self
                    .program
                    .externals()
                    .get(external as usize)
                    .map(|f| f.name.clone())
                    .unwrap_or_default(),
                message: self.m.external_message.clone().unwrap_or_default(),
            },
        }
    }

    /// Runs a list of `target := value` assignments, each value checked to be finite.
    fn assign_all(
        &mut self,
        which: fn(&Self) -> &[(Slot, Code)],
        mem: &mut Mem,
        site: impl Fn(usize) -> FailureSite,
    ) -> Result<(), EvalFailure> {
        for k in 0..which(self).len() {
            let (slot, code) = which(self)[k];
            let value = self.m.eval(code, mem).map_err(|f| EvalFailure {
                time: mem.t,
                kind: self.fault(f),
                site: site(k),
            })?;
            if !value.is_finite() {
                return Err(EvalFailure {
                    time: mem.t,
                    kind: FailureKind::NotFinite { value },
                    site: site(k),
                });
            }
            mem.write(slot, value);
        }
        Ok(())
    }

    /// Computes the dependent parameters and constants into `work` from the parameters `p`,
    /// then checks the parameter conditions of the plan, then evaluates the loops' nominal
    /// values that are expressions of parameters.
    pub fn parameters(&mut self, p: &[f64], work: &mut [f64]) -> Result<(), EvalFailure> {
        self.bind_parameters(p, work)?;
        self.loop_nominals(p, work);
        Ok(())
    }

    /// Sets the scaling of each loop whose tearing unknowns have a `nominal` given by an
    /// expression of parameters, from the parameters just bound: its absolute value when that
    /// is finite and nonzero, else 1 (as for a literal nominal). The register code evaluates it
    /// for both back ends, so both scale their solves by the same numbers.
    fn loop_nominals(&mut self, p: &[f64], work: &mut [f64]) {
        let mut mem = Mem {
            t: f64::NAN,
            x: &[],
            p,
            dx: &mut [],
            work,
        };
        for (solver, code) in self.loops.iter_mut().zip(&self.code.loop_code) {
            for &(j, expr) in &code.nominal {
                let value = match self.m.eval(expr, &mut mem) {
                    Ok(v) if v.is_finite() && v != 0.0 => v.abs(),
                    _ => 1.0,
                };
                solver.set_nominal(j, value);
            }
        }
    }

    /// The parameter program and the parameter conditions of [`Interpreter::parameters`].
    fn bind_parameters(&mut self, p: &[f64], work: &mut [f64]) -> Result<(), EvalFailure> {
        let layout = self.program.layout();
        self.check(
            f64::NAN,
            &[("p", layout.params, p.len()), ("work", layout.work, work.len())],
        )?;
        // The constructors of external objects called now are matched to the objects made
        // before with the same arguments.
        if let Ok(mut objects) = self.m.objects.lock() {
            objects.begin();
        }
        let mut mem = Mem {
            t: f64::NAN,
            x: &[],
            p,
            dx: &mut [],
            work,
        };
        let program = self.program;
        let parameter = |k: usize| FailureSite::Parameter {
            var: program.parameter_program()[k].var,
        };
        let condition = |k: usize| FailureSite::Condition {
            eq: program.conditions()[k].eq,
        };
        let failure = |kind: FailureKind, site: FailureSite| EvalFailure {
            time: f64::NAN,
            kind,
            site,
        };
        if let Some(native) = self.native.clone()
            && let Some(segment) = native.parameters
        {
            // The parameters are the segment's first roots, the conditions its results.
            let n = program.parameter_program().len();
            let mut values = vec![0.0; program.conditions().len()];
            let outcome = mem.native(&native.module, segment, &mut values, self.m.iteration_limit);
            let failed_at = match &outcome {
                Err(JitError::Failed { site, .. }) => *site,
                Err(_) => 0,
                Ok(()) => usize::MAX,
            };
            let targets = program.parameter_program().iter().map(|a| a.target);
            let assigned = if failed_at < n { outcome.clone() } else { Ok(()) };
            native_assignments(targets, &mem, assigned).map_err(|(k, e)| failure(self.kind(e), parameter(k)))?;
            for (k, value) in values.iter().enumerate().take(failed_at.saturating_sub(n)) {
                check_condition(program.conditions()[k], *value).map_err(|kind| failure(kind, condition(k)))?;
            }
            let at = failed_at.saturating_sub(n);
            return outcome.map_err(|e| failure(self.kind(SolveError::from(e)), condition(at)));
        }
        self.assign_all(|s| &s.code.params, &mut mem, parameter)?;
        for k in 0..self.code.conditions.len() {
            let value = self
                .m
                .eval(self.code.conditions[k], &mut mem)
                .map_err(|f| failure(self.fault(f), condition(k)))?;
            check_condition(program.conditions()[k], value).map_err(|kind| failure(kind, condition(k)))?;
        }
        Ok(())
    }

    /// Computes the start values: states into `x`, algebraic and discrete variables into
    /// `work` (the first guesses of Newton iterations, and the values discrete variables keep).
    /// Needs the dependent parameters in `work` ([`Interpreter::parameters`]).
    pub fn start_values(&mut self, p: &[f64], work: &mut [f64], x: &mut [f64]) -> Result<(), EvalFailure> {
        let layout = self.program.layout();
        self.check(
            f64::NAN,
            &[
                ("p", layout.params, p.len()),
                ("work", layout.work, work.len()),
                ("x", layout.states, x.len()),
            ],
        )?;
        let program = self.program;
        for k in 0..self.code.starts.len() {
            let (slot, code) = self.code.starts[k];
            let site = || FailureSite::Start {
                var: program.start_program()[k].var,
            };
            let mut mem = Mem {
                t: f64::NAN,
                x: &[],
                p,
                dx: &mut [],
                work,
            };
            let value = match self.start_overrides[k] {
                Some(value) => value,
                None => self.m.eval(code, &mut mem).map_err(|f| EvalFailure {
                    time: f64::NAN,
                    kind: self.fault(f),
                    site: site(),
                })?,
            };
            if !value.is_finite() {
                return Err(EvalFailure {
                    time: f64::NAN,
                    kind: FailureKind::NotFinite { value },
                    site: site(),
                });
            }
            match slot {
                Slot::State(i) => x[i as usize] = value,
                _ => mem.write(slot, value),
            }
        }
        self.dx_guess.fill(0.0);
        Ok(())
    }

    /// Computes `dx` and every algebraic variable in `work` at time `t` and states `x`.
    pub fn rhs(&mut self, t: f64, x: &[f64], p: &[f64], dx: &mut [f64], work: &mut [f64]) -> Result<(), EvalFailure> {
        self.check_all(t, x, p, dx, work)?;
        // Derivatives computed by Newton iterations start from their last solutions; `dx`
        // belongs to the caller and may hold anything.
        if self.finite_checks == FiniteChecks::Derivatives
            && self.evaluate_rhs(Mem { t, x, p, dx, work }, false).is_ok()
            && all_finite(dx)
        {
            self.remember_guesses(dx);
            return Ok(());
        }
        self.evaluate_rhs(Mem { t, x, p, dx, work }, true)?;
        self.remember_guesses(dx);
        Ok(())
    }

    /// Keeps the derivatives of a successful evaluation as the next starting guesses; only
    /// iterations use them, so a right-hand side of explicit assignments skips the copy.
    fn remember_guesses(&mut self, dx: &[f64]) {
        if self.iterates {
            self.dx_guess.copy_from_slice(dx);
        }
    }

    /// Sets when the right-hand side checks values for being finite.
    pub fn set_finite_checks(&mut self, checks: FiniteChecks) {
        self.finite_checks = checks;
    }

    /// Runs the right-hand side once from the last good derivatives; `each_assignment` checks
    /// every assigned value for being finite.
    fn evaluate_rhs(&mut self, mut mem: Mem, each_assignment: bool) -> Result<(), EvalFailure> {
        if self.iterates {
            mem.dx.copy_from_slice(&self.dx_guess);
        }
        let mut k = 0;
        while k < self.code.rhs.len() {
            match self.step(k, &mut mem, each_assignment) {
                Ok(next) => k = next,
                Err((at, e)) => return Err(self.failure(at, e, mem.t)),
            }
        }
        Ok(())
    }

    /// Runs right-hand-side instruction `k` (natively when native code for it is attached) and
    /// returns the index of the next one, or the failing instruction and what went wrong.
    fn step(&mut self, k: usize, mem: &mut Mem, each_assignment: bool) -> Result<usize, (usize, SolveError)> {
        let result = self.step_with(k, mem, each_assignment, true);
        let Err((failed, SolveError::Kind(FailureKind::Assert { .. } | FailureKind::Terminate { .. }))) = &result
        else {
            return result;
        };
        if self.native.is_none() || self.m.messages.iter().all(|(m, _)| m.exprs().next().is_none()) {
            return result;
        }
        // Native code reports a failed assertion with its message as written. The register
        // code, whose results native code reproduces, fails at the same place and also shows
        // the values the message reads; the instructions before it are computed again.
        let failed = *failed;
        let mut j = k;
        while j <= failed {
            j = self.step_with(j, mem, each_assignment, false)?;
        }
        result
    }

    /// [`Interpreter::step`], natively only when `native` allows it.
    fn step_with(
        &mut self,
        k: usize,
        mem: &mut Mem,
        each_assignment: bool,
        native: bool,
    ) -> Result<usize, (usize, SolveError)> {
        let limit = self.m.iteration_limit;
        let bracketing = self.bracketing;
        let given = &self.given;
        let native = self
            .native
            .as_ref()
            .filter(|_| native)
            .and_then(|n| Some((&n.module, (*n.steps.get(k)?)?)))
            // Native code computes a run of assignments at once: one with a given value in it
            // runs in the interpreter instead.
            .filter(|(_, step)| match step {
                NativeStep::Run { end, .. } => !given.iter().any(|(g, _)| (k..*end).contains(g)),
                _ => true,
            });
        let failed_here = |e: SolveError| (k, e);
        match (native, &self.code.rhs[k]) {
            (_, Step::Given { target, value }) => {
                mem.write(*target, *value);
                Ok(k + 1)
            }
            (Some((module, NativeStep::Run { segment, end })), _) => {
                let outcome = mem.native(module, segment, &mut [], limit);
                if outcome.is_ok()
                    && (!each_assignment
                        || self
                            .native
                            .as_ref()
                            .is_some_and(|n| n.written[segment].all_finite(mem.dx, mem.work)))
                {
                    return Ok(end);
                }
                let targets = self.program.rhs()[k..end].iter().map(|i| match i {
                    Instr::Assign { target, .. } => *target,
                    _ => Slot::Time,
                });
                native_assignments(targets, mem, outcome).map_err(|(j, e)| (k + j, e))?;
                Ok(end)
            }
            (
                Some((
                    module,
                    NativeStep::Newton1 {
                        residual, derivative, ..
                    },
                )),
                Step::Newton1 { target, sound, .. },
            ) => {
                let guess = mem.read(*target);
                let sound = &mut self.scalar_sound[*sound];
                let mut problem = NativeScalar {
                    module,
                    mem,
                    target: *target,
                    residual,
                    derivative,
                    limit,
                };
                let recovery = solve_scalar_restarting(guess, sound, &mut problem, bracketing).map_err(failed_here)?;
                self.note_scalar(k, recovery);
                Ok(k + 1)
            }
            (
                Some((
                    module,
                    NativeStep::Loop {
                        evaluate,
                        partials,
                        untorn,
                    },
                )),
                Step::Loop(l),
            ) => {
                let mut problem = NativeLoop {
                    module,
                    tearing: &self.code.loop_code[*l].tearing,
                    inner: &self.code.loop_code[*l].inner,
                    mem,
                    evaluate,
                    partials,
                    untorn,
                    limit,
                };
                run_loop_restarting(&mut self.loops[*l], &mut self.loop_sound[*l], &mut problem)
                    .map_err(failed_here)?;
                Ok(k + 1)
            }
            (Some((module, NativeStep::Algorithm { segment })), Step::Algorithm(a)) => {
                mem.native(module, segment, &mut [], limit)
                    .map_err(SolveError::from)
                    .and_then(|()| check_finite(&self.code.algorithms[*a].outputs, mem))
                    .map_err(failed_here)?;
                Ok(k + 1)
            }
            (_, Step::Assign { target, code }) => match self.m.eval(*code, mem) {
                Ok(v) if v.is_finite() || !each_assignment => {
                    mem.write(*target, v);
                    Ok(k + 1)
                }
                Ok(value) => Err((k, SolveError::Kind(FailureKind::NotFinite { value }))),
                Err(f) => Err((k, SolveError::Fault(f))),
            },
            (
                _,
                Step::Newton1 {
                    target,
                    residual,
                    derivative,
                    sound,
                },
            ) => {
                let guess = mem.read(*target);
                let sound = &mut self.scalar_sound[*sound];
                let mut problem = InterpretedScalar {
                    m: &mut self.m,
                    mem,
                    target: *target,
                    residual: *residual,
                    derivative: *derivative,
                };
                let recovery = solve_scalar_restarting(guess, sound, &mut problem, bracketing).map_err(failed_here)?;
                self.note_scalar(k, recovery);
                Ok(k + 1)
            }
            (_, Step::Loop(l)) => {
                let mut problem = InterpretedLoop {
                    code: &self.code.loop_code[*l],
                    m: &mut self.m,
                    mem,
                };
                run_loop_restarting(&mut self.loops[*l], &mut self.loop_sound[*l], &mut problem)
                    .map_err(failed_here)?;
                Ok(k + 1)
            }
            (_, Step::Algorithm(a)) => {
                let a = *a;
                self.algorithm(a, mem).map_err(failed_here)?;
                Ok(k + 1)
            }
        }
    }

    /// Counts a solve of scalar equation `k` that plain Newton did not finish.
    fn note_scalar(&mut self, k: usize, recovery: Option<Recovery>) {
        let Some(recovery) = recovery else { return };
        match self.scalar_recoveries.iter_mut().find(|(step, _)| *step == k) {
            Some((_, r)) => r.count += 1,
            None => self.scalar_recoveries.push((
                k,
                Recoveries {
                    first: recovery,
                    count: 1,
                },
            )),
        }
    }

    /// The blocks of the right-hand side that plain Newton did not solve every time, with how
    /// they were solved, in the order of the program's instructions: each as the equations and
    /// unknowns of the block and the record of its recoveries.
    pub fn recoveries(&self) -> Vec<(FailureSite, Recoveries)> {
        let mut out: Vec<(usize, Recoveries)> = self.scalar_recoveries.clone();
        for (k, step) in self.code.rhs.iter().enumerate() {
            if let Step::Loop(l) = step
                && let Some(r) = self.loops[*l].recoveries
            {
                out.push((k, r));
            }
        }
        out.sort_by_key(|(k, _)| *k);
        out.into_iter().map(|(k, r)| (self.site(k), r)).collect()
    }

    /// Forgets the recoveries counted so far.
    pub fn clear_recoveries(&mut self) {
        self.scalar_recoveries.clear();
        for l in &mut self.loops {
            l.recoveries = None;
        }
    }

    /// Runs algorithm section `a`: resets, statements, and the check of its outputs.
    fn algorithm(&mut self, a: usize, mem: &mut Mem) -> Result<(), SolveError> {
        let code = &self.code.algorithms[a];
        for &(slot, reset) in &code.resets {
            let v = self.m.eval(reset, mem)?;
            mem.write(slot, v);
        }
        self.m.run(code.start, mem)?;
        check_finite(&code.outputs, mem)
    }

    /// The failure of right-hand-side step `k`.
    fn failure(&self, k: usize, e: SolveError, t: f64) -> EvalFailure {
        let kind = self.kind(e);
        let site = self.site(k);
        EvalFailure { time: t, kind, site }
    }

    /// The equations and unknowns of right-hand-side step `k`.
    fn site(&self, k: usize) -> FailureSite {
        match &self.program.rhs()[k] {
            Instr::Assign { target, eq, .. } | Instr::Newton1 { target, eq, .. } => FailureSite::Equations {
                eqs: vec![*eq],
                unknowns: vec![*target],
            },
            Instr::Loop(b) => FailureSite::Equations {
                eqs: b.eqs.clone(),
                unknowns: b.unknowns.clone(),
            },
            Instr::Algorithm { index } => FailureSite::Algorithm { index: *index },
        }
    }

    /// Computes the variables alias elimination removed into their `work` slots; call after
    /// [`Interpreter::rhs`] with the same arrays.
    pub fn outputs(
        &mut self,
        t: f64,
        x: &[f64],
        p: &[f64],
        dx: &mut [f64],
        work: &mut [f64],
    ) -> Result<(), EvalFailure> {
        self.check_all(t, x, p, dx, work)?;
        let mut mem = Mem { t, x, p, dx, work };
        let program = self.program;
        let site = |k: usize| FailureSite::Output {
            var: program.outputs()[k].var,
        };
        if let Some(native) = &self.native
            && let Some(segment) = native.outputs
        {
            let outcome = mem.native(&native.module, segment, &mut [], self.m.iteration_limit);
            if outcome.is_ok() && native.written[segment].all_finite(mem.dx, mem.work) {
                return Ok(());
            }
            let targets = program.outputs().iter().map(|a| a.target);
            return native_assignments(targets, &mem, outcome).map_err(|(k, e)| EvalFailure {
                time: t,
                kind: self.kind(e),
                site: site(k),
            });
        }
        self.assign_all(|s| &s.code.outputs, &mut mem, site)
    }
}

/// Checks parameter condition `c` on the value of its expression.
fn check_condition(c: ParamCondition, value: f64) -> Result<(), FailureKind> {
    if c.condition.holds(value) {
        Ok(())
    } else {
        Err(FailureKind::Condition {
            condition: c.condition,
            value,
        })
    }
}

/// Checks that the values of `slots` are finite.
fn check_finite(slots: &[Slot], mem: &Mem) -> Result<(), SolveError> {
    match slots.iter().map(|s| mem.read(*s)).find(|v| !v.is_finite()) {
        Some(value) => Err(SolveError::Kind(FailureKind::NotFinite { value })),
        None => Ok(()),
    }
}

/// The outcome of native code that computed explicit assignments to `targets` in order, as the
/// interpreter reports it: the first assignment whose value is not finite fails (the
/// interpreter stops there, and native code does not check), unless the code failed before
/// it; a failure names its assignment (the root of the segment).
fn native_assignments(
    targets: impl Iterator<Item = Slot>,
    mem: &Mem,
    outcome: Result<(), JitError>,
) -> Result<(), (usize, SolveError)> {
    let failed_at = match &outcome {
        Ok(()) => usize::MAX,
        Err(JitError::Failed { site, .. }) => *site,
        Err(_) => 0,
    };
    for (j, target) in targets.enumerate().take(failed_at) {
        let value = mem.read(target);
        if !value.is_finite() {
            return Err((j, SolveError::Kind(FailureKind::NotFinite { value })));
        }
    }
    outcome.map_err(|e| (failed_at, SolveError::from(e)))
}

/// Whether every value is finite. `v * 0.0` is zero for a finite `v` and NaN for an infinite or
/// NaN one, so the values are finite exactly when the sum of these products is zero; eight
/// independent sums, without an early exit, vectorise to two instructions per pair of values
/// (half the work of testing each value's class).
fn all_finite(values: &[f64]) -> bool {
    // Short arrays (the derivatives of a small model, just stored by native code one value at
    // a time) are tested one value at a time: the sums load two values at once, and such a load
    // of two separately stored values waits for both stores to retire instead of being
    // forwarded from them, which made this check a sixth of a small model's evaluation.
    if values.len() < 64 {
        return values.iter().all(|v| v.is_finite());
    }
    let mut sums = [0.0f64; 8];
    let chunks = values.chunks_exact(8);
    let tail = chunks.remainder().iter().fold(0.0, |sum, v| sum + v * 0.0);
    for chunk in chunks {
        for (sum, v) in sums.iter_mut().zip(chunk) {
            *sum += v * 0.0;
        }
    }
    sums.iter().fold(tail, |total, sum| total + sum) == 0.0
}

/// The variables holding `pre(v)` of each discrete variable `v`, found by what they hold (their
/// description names `v`): an initialization program has them as plain variables, without the
/// event records of the model's program, and both must start them from `v`'s start value.
fn pre_variables(program: &ExecProgram) -> FxHashMap<VarId, Vec<VarId>> {
    let mut pre_of: FxHashMap<VarId, Vec<VarId>> = FxHashMap::default();
    for (pre, symbol) in program.symbols().iter() {
        let owner = symbol
            .description
            .as_deref()
            .and_then(|d| d.strip_prefix("pre("))
            .and_then(|d| d.strip_suffix("), the value before the event"))
            .and_then(|name| program.lookup(name));
        if let Some(v) = owner.filter(|_| symbol.name.starts_with("$pre")) {
            pre_of.entry(v).or_default().push(pre);
        }
    }
    pre_of
}

#[cfg(test)]
mod tests {
    use super::all_finite;

    #[test]
    fn all_finite_finds_every_kind_of_non_finite_value_anywhere() {
        assert!(all_finite(&[]));
        for n in [1, 7, 8, 9, 16, 21] {
            let values: Vec<f64> = (0..n)
                .map(|k| [f64::MAX, -f64::MAX, 0.0, -0.0, 5e-324][k % 5])
                .collect();
            assert!(all_finite(&values), "{values:?}");
            for bad in [f64::INFINITY, f64::NEG_INFINITY, f64::NAN] {
                for at in 0..n {
                    let mut v = values.clone();
                    v[at] = bad;
                    assert!(!all_finite(&v), "{v:?}");
                }
            }
        }
    }
}
