//! A program instance: the interpreter bound to a parameter vector and its work array. This is
//! what an integrator calls, and where non-structural parameters change without rebuilding
//! anything.
//!
//! Input: an [`ExecProgram`]. Output: derivatives, outputs, surfaces and Jacobians at given
//! states, with the instance's parameters. It does not integrate.

use crate::delay::DelayLines;
use crate::interp::{Interpreter, JacobianOut, OdeRhs};
use crate::native::NativeCode;
use crate::spatial::SpatialProfile;
use eqm_compile::dae::VarKind;
use eqm_compile::exec::ExecProgram;
use eqm_diag::Diagnostic;
use eqm_diag::source::Span;
use eqm_ir::expr::ExprId;
use eqm_ir::failure::{EvalFailure, FailureKind, FailureSite};
use eqm_ir::slot::Slot;
use std::sync::{Arc, Mutex};

mod guesses;
mod snapshot;
use guesses::GuessUse;
pub use guesses::{KeptGuesses, SharedGuesses};
pub use snapshot::InstanceSnapshot;

/// The start values of the states with the default parameters (NaN when those are not valid):
/// tests and callers that want the model's own initial point read them here.
pub fn default_start_values(program: &ExecProgram) -> Result<Vec<f64>, Diagnostic> {
    let mut interpreter = Interpreter::new(program)?;
    let layout = program.layout();
    let mut work = vec![0.0; layout.work];
    let mut x = vec![f64::NAN; layout.states];
    let ok = interpreter.parameters(program.p0(), &mut work).is_ok()
        && interpreter.start_values(program.p0(), &mut work, &mut x).is_ok();
    if !ok {
        x.fill(f64::NAN);
    }
    Ok(x)
}

/// An interpreter bound to a parameter vector and its work array: what an integrator calls, and
/// where parameters are changed without rebuilding anything. A clone shares the compiled code
/// (the largest part of a large model's run) and copies the values.
#[derive(Clone)]
pub struct Instance<'p> {
    interpreter: Interpreter<'p>,
    p: Vec<f64>,
    work: Vec<f64>,
    /// The histories of the model's `delay`s, shared with the other instances of the run: every
    /// evaluation at time `t` reads the delayed values at `t` from them.
    delays: Option<Arc<Mutex<DelayLines>>>,
    /// The profiles of the model's `spatialDistribution`s, shared like the delays' histories.
    spatials: Option<Arc<Mutex<Vec<SpatialProfile>>>>,
    /// The guesses of the run's last accepted point and how this instance uses them (see
    /// `guesses`); `None` outside a run's integration.
    guesses: Option<(SharedGuesses, GuessUse)>,
}

impl<'p> Instance<'p> {
    /// An instance with the default parameters and the start values as first guesses.
    pub fn new(program: &'p ExecProgram) -> Result<Instance<'p>, Diagnostic> {
        Instance::with_objects_of(program, None)
    }

    /// [`Instance::new`], with the external objects of `objects_of` (another program of the
    /// same run) when given: see [`Interpreter::share_objects`].
    pub fn with_objects_of(
        program: &'p ExecProgram,
        objects_of: Option<&Instance<'_>>,
    ) -> Result<Instance<'p>, Diagnostic> {
        let mut interpreter = Interpreter::new(program)?;
        if let Some(other) = objects_of {
            interpreter.share_objects(&other.interpreter);
        }
        let layout = program.layout();
        let p = program.p0().to_vec();
        let mut work = vec![0.0; layout.work];
        let mut x = vec![0.0; layout.states];
        interpreter
            .parameters(&p, &mut work)
            .and_then(|()| interpreter.start_values(&p, &mut work, &mut x))
            .map_err(|f| program.failure_diagnostic(&f))?;
        Ok(Instance {
            interpreter,
            p,
            work,
            delays: None,
            spatials: None,
            guesses: None,
        })
    }

    pub fn program(&self) -> &'p ExecProgram {
        self.interpreter.program()
    }

    /// Evaluates with native code from now on (see [`Interpreter::attach_native`]).
    pub fn attach_native(&mut self, native: Arc<NativeCode>) {
        self.interpreter.attach_native(native);
    }

    pub fn interpreter(&mut self) -> &mut Interpreter<'p> {
        &mut self.interpreter
    }

    /// The parameter vector.
    pub fn p(&self) -> &[f64] {
        &self.p
    }

    /// The work array as the last evaluation left it.
    pub fn work(&self) -> &[f64] {
        &self.work
    }

    /// Evaluations read the delayed values of `delay`s from `lines`.
    pub fn attach_delays(&mut self, lines: Arc<Mutex<DelayLines>>) {
        self.delays = Some(lines);
    }

    /// Evaluations read the outputs of `spatialDistribution`s from `profiles` (written at once
    /// from the initial profiles, which have not moved before the first record).
    pub fn attach_spatials(&mut self, profiles: Arc<Mutex<Vec<SpatialProfile>>>) {
        for profile in profiles.lock().unwrap_or_else(|e| e.into_inner()).iter() {
            profile.write(0.0, &mut self.work);
        }
        self.spatials = Some(profiles);
    }

    /// The profiles' values at `(t, x)` into their slots, from each call's position there (which
    /// reads nothing the equations compute: the compiler checked it).
    fn apply_spatials(&mut self, t: f64, x: &[f64], dx: &mut [f64]) -> Result<(), EvalFailure> {
        let Some(profiles) = self.spatials.clone() else {
            return Ok(());
        };
        let profiles = profiles.lock().unwrap_or_else(|e| e.into_inner());
        for (s, profile) in self.program().events().spatials.iter().zip(profiles.iter()) {
            let position = self
                .interpreter
                .event_value(s.x, s.span, t, x, &self.p, dx, &mut self.work)?;
            profile.write(position, &mut self.work);
        }
        Ok(())
    }

    /// Records the accepted point `(t, x)` in the profiles: with the equations solved there,
    /// each call's inflows, position and direction move its profile.
    fn record_spatials(&mut self, t: f64, x: &[f64], dx: &mut [f64]) -> Result<(), EvalFailure> {
        let Some(profiles) = self.spatials.clone() else {
            return Ok(());
        };
        self.apply_delays(t, x, dx)?;
        self.evaluate(t, x, dx)?;
        self.interpreter.outputs(t, x, &self.p, dx, &mut self.work)?;
        let mut profiles = profiles.lock().unwrap_or_else(|e| e.into_inner());
        for (s, profile) in self.program().events().spatials.iter().zip(profiles.iter_mut()) {
            let mut value = |e| {
                self.interpreter
                    .event_value(e, s.span, t, x, &self.p, dx, &mut self.work)
            };
            let (in0, in1, position, positive) = (value(s.in0)?, value(s.in1)?, value(s.x)?, value(s.positive)?);
            profile.record(t, in0, in1, position, positive != 0.0);
            profile.write(position, &mut self.work);
        }
        Ok(())
    }

    /// Before the history starts (in the initialization), each delayed value is its expression
    /// at `(t, x)`: the slots are set to the expressions' values ([`Instance::settle_delays`]).
    /// Every other value is left as it was (the evaluations here would otherwise replace start
    /// values that are first guesses).
    pub fn delays_at_start(&mut self, t: f64, x: &[f64], dx: &mut [f64]) -> Result<(), EvalFailure> {
        if self.program().events().delays.is_empty() {
            return Ok(());
        }
        let saved = self.work.clone();
        let values = self.settle_delays(t, x, dx);
        self.work = saved;
        for (d, value) in self.program().events().delays.iter().zip(&values?) {
            self.set_work(d.slot, *value);
        }
        Ok(())
    }

    /// The delayed expressions at `(t, x)` (evaluating the right-hand side and the outputs
    /// there first), in the program's order.
    fn delayed_expressions(&mut self, t: f64, x: &[f64], dx: &mut [f64]) -> Result<Vec<f64>, EvalFailure> {
        self.evaluate(t, x, dx)?;
        self.interpreter.outputs(t, x, &self.p, dx, &mut self.work)?;
        let program = self.program();
        program
            .events()
            .delays
            .iter()
            .map(|d| {
                self.interpreter
                    .event_value(d.expr, d.span, t, x, &self.p, dx, &mut self.work)
            })
            .collect()
    }

    /// Each delayed value equal to its expression at `(t, x)`, found by a few substitutions
    /// (an expression may read a delayed value): the slots hold the values returned.
    fn settle_delays(&mut self, t: f64, x: &[f64], dx: &mut [f64]) -> Result<Vec<f64>, EvalFailure> {
        let mut values = Vec::new();
        for _ in 0..3 {
            values = self.delayed_expressions(t, x, dx)?;
            for (d, value) in self.program().events().delays.iter().zip(&values) {
                self.set_work(d.slot, *value);
            }
        }
        Ok(values)
    }

    /// The fixed delay times of the model's `delay`s (none without delay lines).
    pub fn delay_times(&self) -> Vec<f64> {
        self.delays.as_ref().map_or(Vec::new(), |lines| {
            lines.lock().unwrap_or_else(|e| e.into_inner()).fixed_delays()
        })
    }

    /// Whether a delayed value jumps at `t` (a delayed expression jumped at `t - d`): an event
    /// there makes the jump exact (see [`DelayLines::pass`]).
    pub fn delays_jump_at(&self, t: f64) -> bool {
        self.delays
            .as_ref()
            .is_some_and(|lines| lines.lock().unwrap_or_else(|e| e.into_inner()).jumps_at(t))
    }

    /// Makes the reads of fixed delays beyond the history's last record extrapolate it (see
    /// [`DelayLines::extrapolate_fixed_delays`]): for a caller that integrates the model.
    pub fn extrapolate_delays(&mut self) {
        if let Some(lines) = &self.delays {
            lines
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .extrapolate_fixed_delays();
        }
    }

    /// The time of the delays' last record, if there is one.
    pub fn delays_recorded_until(&self) -> Option<f64> {
        let lines = self.delays.as_ref()?;
        lines.lock().unwrap_or_else(|e| e.into_inner()).last_record()
    }

    /// Makes the reads at `t` give the delayed values after the jumps there (the event at `t`
    /// is passing them).
    pub fn pass_delay_jumps(&mut self, t: f64) {
        if let Some(lines) = &self.delays {
            lines.lock().unwrap_or_else(|e| e.into_inner()).pass(t);
        }
    }

    /// Whether the model has `spatialDistribution` profiles.
    pub fn has_spatials(&self) -> bool {
        self.spatials.is_some()
    }

    /// Whether the model has delay lines or `spatialDistribution` profiles (the run records
    /// their history at accepted points).
    pub fn has_delays(&self) -> bool {
        self.delays.is_some() || self.spatials.is_some()
    }

    /// The longest step from the last record of the delays' history whose delayed values the
    /// history holds (see [`DelayLines::step_bound`]), and in which no profile of
    /// `spatialDistribution` moves too far (see [`SpatialProfile::step_bound`]).
    pub fn delay_step_bound(&self) -> Option<f64> {
        let delays = self
            .delays
            .as_ref()
            .and_then(|lines| lines.lock().unwrap_or_else(|e| e.into_inner()).step_bound());
        let spatials = self.spatials.as_ref().and_then(|profiles| {
            let profiles = profiles.lock().unwrap_or_else(|e| e.into_inner());
            profiles.iter().filter_map(SpatialProfile::step_bound).reduce(f64::min)
        });
        match (delays, spatials) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The delay times that change during the run at `(t, x)`, in the program's order, each
    /// checked to lie within `[0, delayMax]` (`E0714` otherwise), computed from the values the
    /// work array holds now (those a delay time reads from the equations are the last
    /// evaluation's: see [`Instance::apply_delays`]).
    fn varying_delays(&mut self, t: f64, x: &[f64], dx: &mut [f64]) -> Result<Vec<f64>, EvalFailure> {
        let delays = self.varying_delay_times(t, x, dx)?;
        let Some(lines) = self.delays.clone() else {
            return Ok(delays);
        };
        let lines = lines.lock().unwrap_or_else(|e| e.into_inner());
        let program = self.program();
        let varying = program
            .events()
            .delays
            .iter()
            .zip(lines.lines())
            .filter(|(d, _)| d.varying);
        for ((d, line), &delay) in varying.zip(&delays) {
            if !(0.0..=line.delay).contains(&delay) {
                return Err(EvalFailure {
                    time: t,
                    kind: FailureKind::DelayTime { delay, max: line.delay },
                    site: FailureSite::Delay { span: d.span },
                });
            }
        }
        Ok(delays)
    }

    /// The delay times that change during the run, as the work array gives them now, not
    /// checked.
    fn varying_delay_times(&mut self, t: f64, x: &[f64], dx: &mut [f64]) -> Result<Vec<f64>, EvalFailure> {
        if self.delays.is_none() {
            return Ok(Vec::new());
        }
        let program = self.program();
        let mut delays = Vec::new();
        for d in program.events().delays.iter().filter(|d| d.varying) {
            delays.push(
                self.interpreter
                    .event_value(d.delay, d.span, t, x, &self.p, dx, &mut self.work)?,
            );
        }
        Ok(delays)
    }

    /// The delayed values at `(t, x)` into their slots. A delay time that reads what the
    /// equations compute is settled by substitution: the delayed values are written from the
    /// times of the last evaluation (within `[0, delayMax]`), the equations solved, the times
    /// computed again, until they repeat exactly. The compiler rejected delay times that read
    /// their own delayed value, so each pass fixes at least one more delay of a chain of delays
    /// reading each other, and the passes end after at most one more than there are such
    /// delays; then the times are checked.
    fn apply_delays(&mut self, t: f64, x: &[f64], dx: &mut [f64]) -> Result<(), EvalFailure> {
        self.apply_spatials(t, x, dx)?;
        let Some(lines) = self.delays.clone() else {
            return Ok(());
        };
        let program = self.program();
        let settled = program.events().delays.iter().filter(|d| d.reads_equations).count();
        if settled == 0 {
            let varying = self.varying_delays(t, x, dx)?;
            lines
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .write(t, &varying, &mut self.work);
            return Ok(());
        }
        let largest: Vec<f64> = {
            let lines = lines.lock().unwrap_or_else(|e| e.into_inner());
            lines.lines().iter().filter(|l| l.varying).map(|l| l.delay).collect()
        };
        // A time from values the equations have not settled yet may lie anywhere: it is read
        // within the history's reach until the passes give the real one.
        let within = |times: &[f64]| -> Vec<f64> {
            times
                .iter()
                .zip(&largest)
                .map(|(&d, &max)| if d.is_nan() { max } else { d.clamp(0.0, max) })
                .collect()
        };
        let mut used = self.varying_delay_times(t, x, dx)?;
        for _ in 0..=settled {
            lines
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .write(t, &within(&used), &mut self.work);
            self.evaluate(t, x, dx)?;
            self.interpreter.outputs(t, x, &self.p, dx, &mut self.work)?;
            let again = self.varying_delay_times(t, x, dx)?;
            let repeated = again.iter().zip(&used).all(|(a, b)| a.to_bits() == b.to_bits());
            used = again;
            if repeated {
                break;
            }
        }
        // The work array holds the equations' values for the delayed values written from the
        // times before `used` (the same times once the passes repeat; within a Newton
        // iteration's tolerance of them when a time reads a value solved iteratively, which may
        // not repeat to the last bit): `used` are the times those values give, checked here.
        self.varying_delays(t, x, dx)?;
        lines
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .write(t, &used, &mut self.work);
        Ok(())
    }

    /// Records the profiles of `spatialDistribution` and the delayed expressions at the
    /// accepted point `(t, x)`. The first record, at the
    /// start, has every delayed value equal to its expression (before the start plus its
    /// delay, `delay(e, d)` is `e` at the start).
    pub fn record_delays(&mut self, t: f64, x: &[f64], dx: &mut [f64]) -> Result<(), EvalFailure> {
        self.record_spatials(t, x, dx)?;
        let Some(lines) = self.delays.clone() else {
            return Ok(());
        };
        let first = lines.lock().unwrap_or_else(|e| e.into_inner()).is_empty();
        let values = if first {
            self.settle_delays(t, x, dx)?
        } else {
            self.apply_delays(t, x, dx)?;
            self.delayed_expressions(t, x, dx)?
        };
        let varying = self.varying_delays(t, x, dx)?;
        lines
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .record(t, &values, &varying);
        Ok(())
    }

    /// Sets `work[k]`: how events change discrete variables and relation values, which no
    /// evaluation writes.
    pub fn set_work(&mut self, k: u32, value: f64) {
        if let Some(w) = self.work.get_mut(k as usize) {
            *w = value;
        }
    }

    /// The zero-crossing functions at `(t, x)` into `out`: evaluates the right-hand side and
    /// the outputs first, so `dx` and every variable are those of this point.
    pub fn surfaces(&mut self, t: f64, x: &[f64], dx: &mut [f64], out: &mut [f64]) -> Result<(), EvalFailure> {
        self.apply_delays(t, x, dx)?;
        self.evaluate(t, x, dx)?;
        self.interpreter.outputs(t, x, &self.p, dx, &mut self.work)?;
        self.interpreter.surfaces(t, x, &self.p, dx, &mut self.work, out)
    }

    /// The zero-crossing functions at `(t, x)` from the values the variables hold now (the
    /// start values, after [`Instance::start_values`]), without evaluating the right-hand side.
    pub fn surfaces_at_start(&mut self, t: f64, x: &[f64], dx: &mut [f64], out: &mut [f64]) -> Result<(), EvalFailure> {
        self.interpreter.surfaces(t, x, &self.p, dx, &mut self.work, out)
    }

    /// The symbolic Jacobian at `(t, x)` (see [`Interpreter::jacobian`]): evaluates the
    /// right-hand side first, so `dx` holds `f(t, x)` afterwards.
    pub fn jacobian(&mut self, t: f64, x: &[f64], dx: &mut [f64], out: JacobianOut) -> Result<bool, EvalFailure> {
        if !self.interpreter.has_jacobian() {
            return Ok(false);
        }
        self.apply_delays(t, x, dx)?;
        self.evaluate(t, x, dx)?;
        self.jacobian_at_last(t, x, dx, out)
    }

    /// [`Instance::jacobian`] at the point of the last right-hand-side evaluation, which must
    /// be `(t, x)` with its derivatives in `dx`: for a caller that has just evaluated there
    /// (an output row), so that the right-hand side is not evaluated twice.
    pub fn jacobian_at_last(
        &mut self,
        t: f64,
        x: &[f64],
        dx: &mut [f64],
        out: JacobianOut,
    ) -> Result<bool, EvalFailure> {
        if !self.interpreter.has_jacobian() {
            return Ok(false);
        }
        self.interpreter.jacobian(t, x, &self.p, dx, &mut self.work, out)
    }

    /// Whether the program has a symbolic Jacobian.
    pub fn has_jacobian(&self) -> bool {
        self.interpreter.has_jacobian()
    }

    /// Zero-crossing function `k` alone at `(t, x)` (after the right-hand side and the outputs).
    pub fn surface_at(&mut self, k: usize, t: f64, x: &[f64], dx: &mut [f64]) -> Result<f64, EvalFailure> {
        self.apply_delays(t, x, dx)?;
        self.evaluate(t, x, dx)?;
        self.interpreter.outputs(t, x, &self.p, dx, &mut self.work)?;
        self.interpreter.surface(k, t, x, &self.p, dx, &mut self.work)
    }

    /// One expression of the event program at the point of the last evaluation.
    pub fn event_value(
        &mut self,
        e: ExprId,
        span: Span,
        t: f64,
        x: &[f64],
        dx: &mut [f64],
    ) -> Result<f64, EvalFailure> {
        self.interpreter.event_value(e, span, t, x, &self.p, dx, &mut self.work)
    }

    /// The lines the functions an event action called printed since the last call.
    pub fn take_printed(&mut self) -> Vec<String> {
        self.interpreter.take_printed()
    }

    /// Sets parameter `name` and recomputes the parameters that depend on it, checking the
    /// parameter conditions. On failure the previous value is kept.
    pub fn set_param(&mut self, name: &str, value: f64) -> Result<(), Diagnostic> {
        let program = self.program();
        let i = check_parameter(program, name, value)?;
        let old = self.p[i as usize];
        self.p[i as usize] = value;
        if let Err(failure) = self.interpreter.parameters(&self.p, &mut self.work) {
            self.p[i as usize] = old;
            // The old values passed before, so they pass again and restore `work`.
            let _ = self.interpreter.parameters(&self.p, &mut self.work);
            return Err(program.failure_diagnostic(&failure));
        }
        Ok(())
    }

    /// Overrides the start values of the variables named in `values` for every evaluation from
    /// now on (see [`Interpreter::set_start_values`]), and forgets earlier overrides. Names this
    /// program does not have are skipped: a model and its initialization problem share their
    /// names, but not every variable. Check the names first with [`check_start_value`].
    pub fn set_start_values(&mut self, values: &[(String, f64)]) {
        let program = self.program();
        let vars: Vec<(eqm_ir::expr::VarId, f64)> = values
            .iter()
            .filter_map(|(name, value)| Some((program.lookup(name)?, *value)))
            .collect();
        self.interpreter.set_start_values(&vars);
    }

    /// The value of parameter `name` (independent or dependent).
    pub fn param(&self, name: &str) -> Option<f64> {
        let v = self.program().lookup(name)?;
        match self.program().slot_of(v)? {
            Slot::Param(i) => self.p.get(i as usize).copied(),
            Slot::Work(i) => self.work.get(i as usize).copied(),
            _ => None,
        }
    }

    /// The start values of the states with the current parameters; also resets the guesses of
    /// every iteration to the start values.
    pub fn start_values(&mut self) -> Result<Vec<f64>, EvalFailure> {
        let mut x = vec![0.0; self.program().layout().states];
        self.interpreter.start_values(&self.p, &mut self.work, &mut x)?;
        Ok(x)
    }

    /// The right-hand side at `(t, x)`, its iterations started where `guesses` says: every
    /// evaluation of the instance goes through here.
    fn evaluate(&mut self, t: f64, x: &[f64], dx: &mut [f64]) -> Result<(), EvalFailure> {
        self.restore_guesses(t);
        let result = self.interpreter.rhs(t, x, &self.p, dx, &mut self.work);
        self.note_solved(result.is_ok());
        result
    }

    /// Computes the variables alias elimination removed, after [`OdeRhs::rhs`] at the same point.
    pub fn outputs(&mut self, t: f64, x: &[f64], dx: &mut [f64]) -> Result<(), EvalFailure> {
        self.interpreter.outputs(t, x, &self.p, dx, &mut self.work)
    }

    /// The value of variable `name` at states `x`, as the last evaluation left it (removed
    /// variables after [`Instance::outputs`]).
    pub fn value(&self, name: &str, x: &[f64]) -> Option<f64> {
        let v = self.program().lookup(name)?;
        match self.program().slot_of(v)? {
            Slot::State(i) => x.get(i as usize).copied(),
            Slot::Param(i) => self.p.get(i as usize).copied(),
            Slot::Work(i) => self.work.get(i as usize).copied(),
            Slot::Der(_) | Slot::Time => None,
        }
    }
}

impl OdeRhs for Instance<'_> {
    fn dim(&self) -> usize {
        self.program().layout().states
    }

    fn rhs(&mut self, t: f64, x: &[f64], dx: &mut [f64]) -> Result<(), EvalFailure> {
        self.apply_delays(t, x, dx)?;
        self.evaluate(t, x, dx)
    }
}

/// Checks that the start value of `name` can be set to `value` for a run of `program`: the
/// variable exists, is not a parameter or constant (those are set as parameters), and the
/// value is finite (`E0715` otherwise).
pub fn check_start_value(program: &ExecProgram, name: &str, value: f64) -> Result<(), Diagnostic> {
    let Some(v) = program.lookup(name).filter(|v| program.slot_of(*v).is_some()) else {
        let mut d = Diagnostic::error(
            "E0715",
            format!("there is no variable `{name}` with a start value"),
            program.model_span(),
            "in this model",
        );
        let names = program.variables().map(|(n, ..)| n).filter(|n| !n.starts_with('$'));
        if let Some(s) = eqm_diag::did_you_mean(name, names) {
            d = d.with_help(format!("did you mean `{s}`?"));
        }
        return Err(d);
    };
    let var = program.symbols().get(v);
    let problem = match var.kind {
        VarKind::Parameter | VarKind::Constant => Some("it is a parameter or constant; set its value instead"),
        _ if var.eliminated.is_some() => {
            Some("the compiler replaced it by an alias; set the start value of the variable it equals")
        }
        _ if !value.is_finite() => Some("a start value must be a finite number"),
        _ => None,
    };
    // Another start value was computed from this one when the model was compiled: setting it
    // now would leave that one as it was, a start value the model does not define.
    let problem = problem.map(str::to_string).or_else(|| {
        var.start_read_by.map(|reader| {
            format!(
                "the start value of `{}` is computed from it; set that start value instead",
                program.symbols().get(reader).name
            )
        })
    });
    match problem {
        Some(why) => Err(Diagnostic::error(
            "E0715",
            format!("the start value of `{name}` cannot be set: {why}"),
            var.span,
            "declared here",
        )),
        None => Ok(()),
    }
}

/// Checks that parameter `name` of `program` can be set to `value` without rebuilding
/// anything: it exists, is independent (its value is not computed from other parameters) and
/// the value is finite (`E0707` otherwise). Returns its index in `p`. The parameter conditions
/// are checked when the parameters are computed.
pub fn check_parameter(program: &ExecProgram, name: &str, value: f64) -> Result<u32, Diagnostic> {
    let fallback = program.model_span();
    let Some(v) = program.lookup(name) else {
        let params = program.params().iter().map(|v| program.symbols().get(*v).name.as_str());
        let mut d = Diagnostic::error(
            "E0707",
            format!("there is no parameter `{name}`"),
            fallback,
            "in this model",
        );
        if let Some(s) = eqm_diag::did_you_mean(name, params) {
            d = d.with_help(format!("did you mean `{s}`?"));
        }
        return Err(d);
    };
    let var = program.symbols().get(v);
    let Some(Slot::Param(i)) = program.slot_of(v) else {
        let why = match var.kind {
            eqm_compile::dae::VarKind::Parameter => match var.binding {
                Some(b) => format!(
                    "its value `{}` is computed from other parameters; change those instead",
                    program.expr_text(b)
                ),
                None => "its value is computed from other parameters".to_string(),
            },
            eqm_compile::dae::VarKind::Constant => "it is a constant".to_string(),
            _ => "it is not a parameter".to_string(),
        };
        return Err(Diagnostic::error(
            "E0707",
            format!("`{name}` cannot be set: {why}"),
            var.span,
            "declared here",
        ));
    };
    if !value.is_finite() {
        return Err(Diagnostic::error(
            "E0707",
            format!("`{name}` cannot be set to {value}: a parameter must be a finite number"),
            var.span,
            "declared here",
        ));
    }
    Ok(i)
}
