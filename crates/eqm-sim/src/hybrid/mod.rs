//! Hybrid simulation: integration with state events, when-clauses and sliding mode.
//!
//! Input: a model instance whose program has an event program (`exec::ExecEvents`: zero-crossing
//! surfaces, when-clauses, discrete slots), a [`Stepper`], the time span and the output
//! request. Output: rows handed to an observer (the output times, plus one row just before and
//! one just after each event, so that a plot shows the jump), and a [`HybridOutcome`]; or a
//! [`HybridError`].
//!
//! Between events every relation keeps the value frozen at the last event, so the right-hand
//! side the stepper sees is smooth. After each accepted step every surface is searched over the
//! whole step (`isolate`: values and slopes on the dense output, halving where a surface is not
//! resolved by the step), so that a step spanning several crossings loses none; the earliest
//! crossing is located on the stepper's dense output by the Illinois method to a time tolerance
//! of about 1e-13 relative. The earliest crossing ends the step there: the event iteration updates
//! relations, fires when-branches whose conditions became true (assignments in the order the
//! program sorted them, or solved together with the continuous equations when one of them reads
//! a continuous variable computed from an assigned one (`coupled`); `pre(v)` of a discrete
//! variable reads its value before the pass, held in its own slot), fires the clauses those
//! assignments make rise, and repeats until nothing changes; then the stepper restarts.
//!
//! `delay`s read the history the run records (`crate::delay`): at the start, within and at the
//! end of every accepted step and on both sides of every event; a step is no longer than the
//! shortest fixed delay (or half a delay time that changes) and ends at each breaking point of a
//! fixed delay, where a jump reaches a delayed value.
//!
//! When the vector fields on both sides of a surface push the solution back onto it (what
//! makes a naive `sign` model chatter), the run continues in Filippov sliding mode: the
//! derivative is the convex combination `α f⁺ + (1 − α) f⁻` that keeps the surface's function
//! constant (`α` from the two directional derivatives of the surface, by difference
//! quotients), and sliding ends when `α` leaves `[0, 1]`, located like a crossing. Several
//! surfaces sliding at once is not well defined here and stops the run with a diagnostic, as
//! does an accumulation of events (Zeno behaviour) and an event iteration that does not settle.
//!
//! A run may watch relations and Boolean variables ([`Watch`], one mode of a variable-structure
//! model): it ends with [`HybridOutcome::Switched`] after the event iteration where one of them
//! has another value than the run was started for, so that its caller continues in the program
//! of the new mode.
//!
//! The parts: `driver` runs the steps and the events between them ([`integrate`]); `crossing`
//! and `isolate` find and locate crossings; `events` is the event iteration and the clocks;
//! `coupled` solves the assignments that read continuous variables; `assertions` checks the
//! model's assertions. This module holds the model as the stepper sees it ([`HybridModel`]).
//!
//! Deliberately not here: the methods themselves (`integrators`), model compilation and IO.

use crate::ode::ModelOde;
use eqm_compile::exec::{ExecPrevious, ExecProgram};
use eqm_diag::source::Span;
use eqm_integrators::{IntegrationError, OdeSystem, RhsError, Schedule, Stepper};
use eqm_ir::failure::EvalFailure;
use eqm_ir::flat::WhenAction;
use eqm_ir::slot::Slot;
use std::ops::ControlFlow;

mod assertions;
mod coupled;
mod crossing;
mod driver;
mod events;
mod isolate;
mod mixed;
mod zeno;

pub(crate) use crossing::sign_of;
use crossing::*;
pub use driver::{EventPolicy, ModelSnapshot, Resumable, ResumableSnapshot, integrate};
use events::*;
use isolate::*;

/// When a when-branch fired last, and how its firings have been getting closer: the signal of
/// an accumulation of events (a bouncing ball coming to rest).
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
struct Firings {
    last: Option<f64>,
    gap: Option<f64>,
    /// Consecutive firings, each closer to the previous one than that one to its predecessor.
    shrinking: usize,
    /// Once the firings accumulate (`zeno`): the limit their series predicts, how far past it
    /// the run goes before deciding, the firings since, and the speed of the condition's
    /// surfaces right after the last one.
    #[serde(default)]
    limit: Option<f64>,
    #[serde(default)]
    margin: f64,
    #[serde(default)]
    watched: usize,
    #[serde(default)]
    speed: Option<f64>,
}

/// Per when-clause and branch: the condition's value at the last event (a branch fires when
/// it becomes true) and the history of its firings.
struct WhenState {
    conditions: Vec<Vec<bool>>,
    firings: Vec<Vec<Firings>>,
}

/// How many firings with shrinking gaps, and how close the accumulation point their geometric
/// decrease predicts (relative to the time), make an accumulation of events.
const ZENO_FIRINGS: usize = 10;
const ZENO_HORIZON: f64 = 1e-4;

/// How close to its threshold (relative to the largest state) a watched relation may be at the
/// start of a resumed run and still take the value the run was started for: the states carried
/// over from the located switch are that close to it.
const PIN_TOLERANCE: f64 = 1e-8;

/// The most passes of one event iteration.
const MAX_EVENT_ITERATIONS: usize = 50;
/// Events closer together than this (relative to the time) count towards an accumulation.
const ACCUMULATION_GAP: f64 = 1e-9;
/// How many events in a row, each within [`ACCUMULATION_GAP`] of the previous one, make an
/// accumulation of events.
const ACCUMULATION_COUNT: usize = 40;

/// How a hybrid run ended.
#[derive(Debug, Clone, PartialEq)]
pub enum HybridOutcome {
    Finished,
    /// The observer asked to stop at this time.
    Stopped {
        time: f64,
    },
    /// `terminate` was called at this time.
    Terminated {
        time: f64,
        message: String,
    },
    /// A watched value (see [`Watch`]) differs from the one the run was started for, after the
    /// event iteration at `time` (or at the start); `x` holds the states there.
    Switched {
        time: f64,
        x: Vec<f64>,
        /// The consistent initial values themselves differ from the watched ones (see
        /// [`crate::run::Switch::at_initialization`]).
        at_initialization: bool,
    },
}

/// Values a run is valid for: the relations and discrete variables that chose the structure of
/// the program it runs (one mode of a variable-structure model). The run ends as soon as one of
/// them has another value after an event iteration, so that its caller continues with the
/// program of the new mode.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Watch {
    /// The work slot of each watched relation or discrete variable, and its value for this run.
    pub values: Vec<(u32, bool)>,
    /// Whether the run continues an earlier one at its start time: `initial()` is not true again
    /// there, and a watched relation that is on its threshold at the start (within rounding of
    /// the states carried over) takes the value the run was started for.
    pub resume: bool,
    /// For a resumed run, the `pre` values of the discrete variables in the pass of the event
    /// iteration that switched (see [`crate::run::Switch::previous`]): the new mode's
    /// initialization goes on with that pass, so they are its `pre` values.
    pub previous: Vec<(String, f64)>,
}

/// Why a hybrid run failed.
#[derive(Debug)]
pub enum HybridError {
    /// The integration failed (the model's failure, if it was one, is in the model).
    Integration(IntegrationError),
    /// Evaluating the model at an event failed.
    Evaluation(EvalFailure),
    /// Event handling itself cannot go on: what happened, when, and where in the model.
    Event {
        /// `E0710` several sliding surfaces, `E0711` an accumulation of events, `E0712` an
        /// event iteration that does not settle, `E0714` a sample with no finite start or no positive
        /// interval.
        code: &'static str,
        time: f64,
        message: String,
        span: Span,
        help: String,
    },
    /// An assertion of level error does not hold (`E0705`): the time, what it says, where it
    /// is and its condition as written.
    Assertion {
        time: f64,
        message: String,
        span: Span,
        condition: String,
    },
}

impl From<IntegrationError> for HybridError {
    fn from(e: IntegrationError) -> Self {
        HybridError::Integration(e)
    }
}

impl From<EvalFailure> for HybridError {
    fn from(e: EvalFailure) -> Self {
        HybridError::Evaluation(e)
    }
}

/// Counters and notes of a hybrid run, for `-v`.
#[derive(Debug, Clone, Default)]
pub struct EventStats {
    pub events: usize,
    /// What happened that a user may want to know (sliding started or ended).
    pub notes: Vec<String>,
    /// Assertions of level warning that stopped holding, each time they did (the run's summary
    /// takes them over).
    pub warnings: Vec<eqm_diag::Diagnostic>,
    /// The lines `Modelica.Utilities.Streams.print` printed, in the order it did.
    pub printed: Vec<PrintedLine>,
}

/// A line a model printed (`Modelica.Utilities.Streams.print`) and the time it did.
#[derive(Debug, Clone, PartialEq)]
pub struct PrintedLine {
    pub time: f64,
    pub text: String,
}

/// Sliding on one surface.
#[derive(Debug, Clone)]
struct Sliding {
    surface: usize,
    /// `α` of the last evaluation.
    alpha: f64,
    since: f64,
}

/// A model with frozen relations, as the stepper sees it; in sliding mode its right-hand side
/// is the Filippov combination.
pub struct HybridModel<'p> {
    /// The model's field and Jacobian, with the relations frozen.
    pub ode: ModelOde<'p>,
    program: &'p ExecProgram,
    /// The frozen sign of each surface (-1, 0, 1).
    signs: Vec<i8>,
    sliding: Option<Sliding>,
    /// The surface whose sliding just ended: its side is the one the sliding coefficient left
    /// towards, which the event iteration keeps (the surface's value itself is then within
    /// the drift of sliding of zero, on either side).
    held: Option<usize>,
    /// Per assertion of the program, whether it held at its last check.
    assertions_holding: Vec<bool>,
    /// Scratch: surface values, two derivative vectors and a probe point.
    d: Vec<f64>,
    f_plus: Vec<f64>,
    f_minus: Vec<f64>,
    probe_x: Vec<f64>,
    probe_dx: Vec<f64>,
    /// Scratch: a point of the dense output where the watched functions are evaluated.
    probe_point: Vec<f64>,
    /// The derivative at points where crossings are checked and located.
    check_dx: Vec<f64>,
    /// Events handled so far and notes about them.
    pub stats: EventStats,
    /// What this run is valid for.
    pub watch: Watch,
    /// Whether the run ends with the final event (see `RunOptions::final_event`).
    pub final_event: bool,
    /// Surfaces of watched relations whose sign is the one the run was started for although
    /// their value is within this distance of zero (set at the start of a resumed run).
    pinned: Vec<(usize, f64)>,
}

impl<'p> HybridModel<'p> {
    pub fn new(ode: ModelOde<'p>) -> Self {
        let program = ode.instance.program();
        let n = program.layout().states;
        let surfaces = program.events().surfaces.len();
        HybridModel {
            ode,
            program,
            signs: vec![0; surfaces],
            sliding: None,
            held: None,
            assertions_holding: vec![true; program.assertions().len()],
            d: vec![0.0; surfaces],
            f_plus: vec![0.0; n],
            f_minus: vec![0.0; n],
            probe_x: vec![0.0; n],
            probe_dx: vec![0.0; n],
            probe_point: vec![0.0; n],
            check_dx: vec![0.0; n],
            stats: EventStats::default(),
            watch: Watch::default(),
            final_event: true,
            pinned: Vec::new(),
        }
    }

    /// Whether surface `k` keeps its sign because it is a watched relation on its threshold
    /// (unpinned once its value leaves the threshold's neighbourhood).
    fn is_pinned(&mut self, k: usize) -> bool {
        let Some(at) = self.pinned.iter().position(|&(s, _)| s == k) else {
            return false;
        };
        if self.d[k].abs() <= self.pinned[at].1 {
            return true;
        }
        self.pinned.remove(at);
        false
    }

    /// The side of surface `k` a resumed run starts on when the surface is a watched relation
    /// within `threshold` of zero: the side on which the relation has its watched value.
    fn watched_side(&self, k: usize, threshold: f64) -> Option<i8> {
        if !self.watch.resume || self.d[k].abs() > threshold {
            return None;
        }
        self.program.events().surfaces[k]
            .relations
            .iter()
            .find_map(|&(slot, test)| {
                let Slot::Work(w) = slot else { return None };
                let (_, wanted) = *self.watch.values.iter().find(|&&(s, _)| s == w)?;
                let now = sign_of(self.d[k]);
                Some(if now != 0 && test.holds(now) == wanted {
                    now
                } else if test.holds(1) == wanted {
                    1
                } else {
                    -1
                })
            })
    }

    /// Whether a watched value differs from the one this run was started for at `(t, x)`, with
    /// every variable computed there (a watched Boolean may be one that only the outputs need).
    fn switched(&mut self, t: f64, x: &[f64]) -> Result<bool, EvalFailure> {
        if self.watch.values.is_empty() {
            return Ok(false);
        }
        let mut dx = std::mem::take(&mut self.check_dx);
        let evaluated = crate::interp::OdeRhs::rhs(&mut self.ode.instance, t, x, &mut dx)
            .and_then(|()| self.ode.instance.outputs(t, x, &mut dx));
        self.check_dx = dx;
        evaluated?;
        let work = self.ode.instance.work();
        Ok(self
            .watch
            .values
            .iter()
            .any(|&(w, wanted)| (work.get(w as usize).copied().unwrap_or(0.0) != 0.0) != wanted))
    }

    /// Whether a watched value, as the instance holds it now (not evaluated again), differs
    /// from the one this run was started for.
    fn watch_differs_now(&self) -> bool {
        let wanted = self.watch.values.iter().map(|&(_, wanted)| wanted);
        self.watched_values()
            .into_iter()
            .zip(wanted)
            .any(|(now, wanted)| now != wanted)
    }

    /// The watched values now, in the order of the watch.
    pub fn watched_values(&self) -> Vec<bool> {
        let work = self.ode.instance.work();
        self.watch
            .values
            .iter()
            .map(|&(w, _)| work.get(w as usize).copied().unwrap_or(0.0) != 0.0)
            .collect()
    }

    /// Writes the relation variables of surface `k` for sign `sign`, or for the sliding
    /// coefficient `alpha` (the share of the positive side) when given.
    fn write_relations(&mut self, k: usize, sign: i8, alpha: Option<f64>) {
        for &(slot, test) in &self.program.events().surfaces[k].relations {
            let Slot::Work(w) = slot else { continue };
            let value = match alpha {
                Some(a) if test.holds(1) && !test.holds(-1) => a,
                Some(a) if test.holds(-1) && !test.holds(1) => 1.0 - a,
                _ => f64::from(u8::from(test.holds(sign))),
            };
            self.ode.instance.set_work(w, value);
        }
    }

    /// The value of every surface at `(t, x)`: the event indicators of an FMU, whose signs
    /// change where the relations they decide would.
    pub fn surface_values(&mut self, t: f64, x: &[f64], dx: &mut [f64]) -> Result<&[f64], EvalFailure> {
        self.surfaces_at(t, x, dx)?;
        Ok(&self.d)
    }

    /// The event indicators for a caller that integrates the model, into `self.d`: each
    /// surface's value moved by the driver's hysteresis towards the side its relation is on,
    /// so that the caller's root lies past the surface (where the event's relation is the new
    /// one; on the surface itself it would be the old one, and the caller, restarting on zero,
    /// would see no crossing after it); while sliding, for the sliding surface, `min(α, 1 - α)`
    /// of the Filippov coefficient `α`, which is positive while the solution slides and crosses
    /// zero where the sliding ends (the field of one side stops pushing back).
    pub fn caller_indicators(&mut self, t: f64, x: &[f64], dx: &mut [f64]) -> Result<&[f64], EvalFailure> {
        self.surfaces_at(t, x, dx)?;
        for (d, &side) in self.d.iter_mut().zip(&self.signs) {
            *d += f64::from(side) * driver::hysteresis(*d);
        }
        if let Some(k) = self.sliding.as_ref().map(|s| s.surface) {
            let alpha = self.sliding_rhs(k, t, x, dx)?;
            self.d[k] = alpha.min(1.0 - alpha);
        }
        Ok(&self.d)
    }

    /// The Filippov coefficient of the sliding motion at `(t, x)`, if the model slides.
    pub(crate) fn sliding_alpha(&mut self, t: f64, x: &[f64]) -> Result<Option<f64>, EvalFailure> {
        let Some(k) = self.sliding.as_ref().map(|s| s.surface) else {
            return Ok(None);
        };
        let mut dx = std::mem::take(&mut self.check_dx);
        let alpha = self.sliding_rhs(k, t, x, &mut dx);
        self.check_dx = dx;
        alpha.map(Some)
    }

    /// Checks the model's assertions at `(t, x)` (after an accepted step of a caller that
    /// integrates itself).
    pub fn check_assertions_at(&mut self, t: f64, x: &[f64]) -> Result<(), HybridError> {
        self.check_assertions(t, x, false)
    }

    /// The surfaces at `(t, x)` into `self.d`, with `dx` the derivative there.
    fn surfaces_at(&mut self, t: f64, x: &[f64], dx: &mut [f64]) -> Result<(), EvalFailure> {
        let mut d = std::mem::take(&mut self.d);
        let result = self.ode.instance.surfaces(t, x, dx, &mut d);
        self.d = d;
        result
    }

    /// The time derivative of surface `k` along the field `f` at `(t, x)`, whose surface value
    /// is `d0`, by a forward difference quotient.
    fn directional(&mut self, k: usize, t: f64, x: &[f64], f: &[f64], d0: f64) -> Result<f64, EvalFailure> {
        let norm_x = x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let norm_f = f.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let h = f64::EPSILON.sqrt() * (1.0 + norm_x).max(1.0 + t.abs()) / (1.0 + norm_f);
        let mut probe_x = std::mem::take(&mut self.probe_x);
        let mut probe_dx = std::mem::take(&mut self.probe_dx);
        for ((p, xi), fi) in probe_x.iter_mut().zip(x).zip(f) {
            *p = xi + h * fi;
        }
        let result = self.surfaces_at(t + h, &probe_x, &mut probe_dx);
        self.probe_x = probe_x;
        self.probe_dx = probe_dx;
        result?;
        Ok((self.d[k] - d0) / h)
    }

    /// Both one-sided fields at `(t, x)` of surface `k` (into `f_plus`, `f_minus`) and their
    /// directional derivatives of the surface.
    fn sides(&mut self, k: usize, t: f64, x: &[f64]) -> Result<(f64, f64), EvalFailure> {
        let mut f_plus = std::mem::take(&mut self.f_plus);
        let mut f_minus = std::mem::take(&mut self.f_minus);
        let result = (|| {
            self.write_relations(k, 1, None);
            self.surfaces_at(t, x, &mut f_plus)?;
            let d0 = self.d[k];
            let a_plus = self.directional(k, t, x, &f_plus, d0)?;
            self.write_relations(k, -1, None);
            self.surfaces_at(t, x, &mut f_minus)?;
            let d0 = self.d[k];
            let a_minus = self.directional(k, t, x, &f_minus, d0)?;
            Ok((a_plus, a_minus))
        })();
        self.f_plus = f_plus;
        self.f_minus = f_minus;
        result
    }

    /// The sliding coefficient at `(t, x)` and the Filippov field into `dx`.
    fn sliding_rhs(&mut self, k: usize, t: f64, x: &[f64], dx: &mut [f64]) -> Result<f64, EvalFailure> {
        let (a_plus, a_minus) = self.sides(k, t, x)?;
        let denominator = a_minus - a_plus;
        let alpha = if denominator.abs() > 0.0 {
            a_minus / denominator
        } else {
            0.5
        };
        for ((out, p), m) in dx.iter_mut().zip(&self.f_plus).zip(&self.f_minus) {
            *out = alpha * p + (1.0 - alpha) * m;
        }
        // The relation variables hold the coefficient itself, so that variables computed from
        // them (a friction force through `sign`) show the combination in the results.
        self.write_relations(k, 0, Some(alpha));
        Ok(alpha)
    }

    /// Restarts `stepper` at an event's `(t, x)`: the iterations start from the values the
    /// event left from now on (see [`OdeSystem::accepted`]).
    pub(crate) fn restart(&mut self, stepper: &mut dyn Stepper, t: f64, x: &[f64]) -> Result<(), HybridError> {
        stepper.restart(t, x)?;
        self.accepted();
        Ok(())
    }
}

/// The model's field and Jacobian ([`ModelOde`]), but while sliding the Filippov combination,
/// whose Jacobian is left to difference quotients (its coefficient depends on the state).
impl OdeSystem for HybridModel<'_> {
    fn dim(&self) -> usize {
        self.ode.dim()
    }

    fn rhs(&mut self, t: f64, x: &[f64], dx: &mut [f64]) -> Result<(), RhsError> {
        let Some(k) = self.sliding.as_ref().map(|s| s.surface) else {
            return self.ode.rhs(t, x, dx);
        };
        let result = self.sliding_rhs(k, t, x, dx).map(|alpha| {
            if let Some(s) = &mut self.sliding {
                s.alpha = alpha;
            }
        });
        self.ode.keep(result)
    }

    fn accepted(&mut self) {
        self.ode.accepted();
    }

    fn jacobian(&mut self, t: f64, x: &[f64], jacobian: &mut nalgebra::DMatrix<f64>) -> Option<Result<(), RhsError>> {
        if self.sliding.is_some() {
            return None;
        }
        self.ode.jacobian(t, x, jacobian)
    }

    fn jacobian_pattern(&self) -> Option<&[Vec<u32>]> {
        self.ode.jacobian_pattern()
    }

    fn cancelled(&self) -> bool {
        self.ode.cancelled()
    }

    fn sparse_jacobian(&mut self, t: f64, x: &[f64], values: &mut [f64]) -> Option<Result<(), RhsError>> {
        if self.sliding.is_some() {
            return None;
        }
        self.ode.sparse_jacobian(t, x, values)
    }
}

/// A crossing found at the end of a step.
#[derive(Debug, Clone, Copy)]
enum Crossing {
    /// Surface `k` changed sign.
    Surface(usize),
    /// The sliding coefficient left `[0, 1]`: below 0 (`false`) or above 1 (`true`).
    SlidingEnds(bool),
}

/// A row while sliding: the share `α` of the positive side at the row's point and, per relation
/// variable of the sliding surface, its work slot and its values on the positive and the
/// negative side.
#[derive(Debug, Clone)]
pub struct SlidingSides {
    pub alpha: f64,
    pub relations: Vec<(u32, f64, f64)>,
}

impl HybridModel<'_> {
    /// While sliding, the sides to combine the outputs of a row at `(t, x)` from (`α` computed
    /// at that point); `None` otherwise, or where `α` cannot be evaluated.
    pub fn sliding_sides(&mut self, t: f64, x: &[f64]) -> Option<SlidingSides> {
        let k = self.sliding.as_ref()?.surface;
        let mut dx = std::mem::take(&mut self.check_dx);
        let alpha = self.sliding_rhs(k, t, x, &mut dx).ok();
        self.check_dx = dx;
        let relations = self.program.events().surfaces[k]
            .relations
            .iter()
            .filter_map(|&(slot, test)| match slot {
                Slot::Work(w) => Some((
                    w,
                    f64::from(u8::from(test.holds(1))),
                    f64::from(u8::from(test.holds(-1))),
                )),
                _ => None,
            })
            .collect();
        Some(SlidingSides {
            alpha: alpha?.clamp(0.0, 1.0),
            relations,
        })
    }

    /// When the current sliding phase started, if sliding.
    pub fn sliding_since(&self) -> Option<f64> {
        self.sliding.as_ref().map(|s| s.since)
    }

    /// The discrete slots and their values, to copy into another instance of the program
    /// (the one that evaluates output rows).
    pub fn discrete_values(&self) -> impl Iterator<Item = (u32, f64)> + '_ {
        let work = self.ode.instance.work();
        self.program
            .events()
            .discrete
            .iter()
            .map(move |&k| (k, work.get(k as usize).copied().unwrap_or(0.0)))
    }
}
