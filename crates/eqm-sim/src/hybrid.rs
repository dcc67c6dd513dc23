//! Hybrid simulation: integration with state events, when-clauses and sliding mode.
//!
//! Input: a model instance whose program has an event program (`exec::ExecEvents`: zero-crossing
//! surfaces, when-clauses, discrete slots), a [`Stepper`], the time span and the output
//! request. Output: rows handed to an observer (the output times, plus one row just before and
//! one just after each event, as `cli.md` promises), and a [`HybridOutcome`]; or a
//! [`HybridError`].
//!
//! Between events every relation keeps the value frozen at the last event, so the right-hand
//! side the stepper sees is smooth. After each accepted step the surfaces are evaluated at the
//! step's end; a surface whose sign disagrees with its frozen sign has crossed, and the crossing
//! is located on the stepper's dense output by the Illinois method to a time tolerance of about
//! 1e-13 relative. The earliest crossing ends the step there: the event iteration updates
//! relations, fires when-branches whose conditions became true (all action values computed from
//! the values before the event, then applied: `pre` semantics), and repeats until nothing
//! changes; then the stepper restarts.
//!
//! When the vector fields on both sides of a surface push the solution back onto it (what
//! makes a naive `sign` model chatter), the run continues in Filippov sliding mode: the
//! derivative is the convex combination `α f⁺ + (1 − α) f⁻` that keeps the surface's function
//! constant (`α` from the two directional derivatives of the surface, by difference
//! quotients), and sliding ends when `α` leaves `[0, 1]`, located like a crossing. Several
//! surfaces sliding at once is not well defined here and stops the run with a diagnostic, as
//! does an accumulation of events (Zeno behaviour) and an event iteration that does not settle.
//!
//! Deliberately not here: the methods themselves (`integrators`), model compilation, IO, and
//! time events other than relations on `time` (they are located like any crossing).

use crate::ode::ModelOde;
use eqm_compile::exec::ExecProgram;
use eqm_diag::source::Span;
use eqm_integrators::{IntegrationError, OdeSystem, Output, RhsError, Schedule, Stepper};
use eqm_ir::failure::EvalFailure;
use eqm_ir::flat::WhenAction;
use eqm_ir::slot::Slot;
use std::ops::ControlFlow;

/// When a when-branch fired last, and how its firings have been getting closer: the signal of
/// an accumulation of events (a bouncing ball coming to rest).
#[derive(Debug, Clone, Copy, Default)]
struct Firings {
    last: Option<f64>,
    gap: Option<f64>,
    /// Consecutive firings, each closer to the previous one than that one to its predecessor.
    shrinking: usize,
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

/// Points of each step at which the surfaces are checked (the last is the step's end).
const SAMPLES: usize = 3;

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
        /// event iteration that does not settle.
        code: &'static str,
        time: f64,
        message: String,
        span: Span,
        help: String,
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
    /// Scratch: surface values, two derivative vectors and a probe point.
    d: Vec<f64>,
    f_plus: Vec<f64>,
    f_minus: Vec<f64>,
    probe_x: Vec<f64>,
    probe_dx: Vec<f64>,
    /// The derivative at points where crossings are checked and located.
    check_dx: Vec<f64>,
    /// Events handled so far and notes about them.
    pub stats: EventStats,
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
            d: vec![0.0; surfaces],
            f_plus: vec![0.0; n],
            f_minus: vec![0.0; n],
            probe_x: vec![0.0; n],
            probe_dx: vec![0.0; n],
            check_dx: vec![0.0; n],
            stats: EventStats::default(),
        }
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

    fn jacobian(&mut self, t: f64, x: &[f64], jacobian: &mut nalgebra::DMatrix<f64>) -> Option<Result<(), RhsError>> {
        if self.sliding.is_some() {
            return None;
        }
        self.ode.jacobian(t, x, jacobian)
    }

    fn jacobian_pattern(&self) -> Option<&[Vec<u32>]> {
        self.ode.jacobian_pattern()
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

/// What happened since the last restart, to tell a crossing from noise: a surface must move
/// beyond this distance on the wrong side to count (a tiny hysteresis that keeps the point an
/// event leaves, which lies within rounding of the surface, from counting as a new crossing).
fn hysteresis(d0: f64) -> f64 {
    1e-12 * (1.0 + d0.abs())
}

/// Runs the hybrid simulation of `model` from `(t0, x0)` to `t_end`; `row(model, t, x)` is
/// called for each output row and may stop the run.
pub fn integrate(
    model: &mut HybridModel<'_>,
    stepper: &mut dyn Stepper,
    t0: f64,
    x0: &[f64],
    t_end: f64,
    output: &Output,
    mut row: impl FnMut(&mut HybridModel<'_>, f64, &[f64]) -> ControlFlow<()>,
) -> Result<HybridOutcome, HybridError> {
    if !(t0.is_finite() && t_end.is_finite() && t_end >= t0) {
        return Err(IntegrationError::InvalidInput {
            message: format!("the end time {t_end} must be finite and not before the start time {t0}"),
        }
        .into());
    }
    let mut schedule = Schedule::new(output, t0, t_end)?;
    let n = x0.len();
    let mut x = x0.to_vec();
    let mut dx = vec![0.0; n];
    let program = model.program;
    let events = program.events();
    let mut whens = WhenState {
        conditions: events.whens.iter().map(|w| vec![false; w.branches.len()]).collect(),
        firings: events
            .whens
            .iter()
            .map(|w| vec![Firings::default(); w.branches.len()])
            .collect(),
    };
    // The initial event iteration: relations from the initial values (a surface exactly at zero
    // takes the side its fields lead to), conditions true at the start do not fire.
    model.surfaces_at(t0, &x, &mut dx)?;
    for k in 0..model.signs.len() {
        model.signs[k] = surface_sign(model.program, k, model.d[k]);
        model.write_relations(k, model.signs[k], None);
    }
    let mut zero_surfaces: Vec<usize> = (0..model.signs.len()).filter(|&k| model.signs[k] == 0).collect();
    if let Some(terminated) = event_iteration(model, t0, &mut x, &mut dx, &mut whens, true)? {
        return Ok(terminated);
    }
    let mut near: Vec<f64> = model.d.iter().map(|d| hysteresis(*d)).collect();
    decide_sides(model, t0, &x, &mut zero_surfaces)?;
    // `initial()` is true for one event right after the initialization: when-clauses on it
    // fire there.
    if let Some((slot, _)) = events.initial {
        model.ode.instance.set_work(slot, 1.0);
        let outcome = event_iteration(model, t0, &mut x, &mut dx, &mut whens, false)?;
        model.ode.instance.set_work(slot, 0.0);
        let outcome = match outcome {
            Some(terminated) => Some(terminated),
            None => event_iteration(model, t0, &mut x, &mut dx, &mut whens, false)?,
        };
        if let Some(terminated) = outcome {
            let _ = row(model, t0, &x);
            return Ok(terminated);
        }
    }
    let mut clocks = Clocks::new(model, t0, &x, &mut dx)?;
    if row(model, t0, &x).is_break() {
        return Ok(HybridOutcome::Stopped { time: t0 });
    }
    // A sample at the start time is an event right after the initialization.
    if clocks.next() == Some(t0) {
        if let Some(terminated) = clocks.fire(model, t0, &mut x, &mut dx, &mut whens)? {
            let _ = row(model, t0, &x);
            return Ok(terminated);
        }
        model.stats.events += 1;
        if row(model, t0, &x).is_break() {
            return Ok(HybridOutcome::Stopped { time: t0 });
        }
    }
    stepper.initialize(model, t0, &x)?;
    let mut buffer = vec![0.0; n];
    let mut point = vec![0.0; n];
    let mut recent_events: Vec<f64> = Vec::new();
    while stepper.time() < t_end {
        // Time events (samples) end a step exactly.
        let limit = clocks.next().map_or(t_end, |c| c.min(t_end));
        let info = stepper.step(model, limit)?;
        // The surfaces at the step's end, with the relations as the step had them.
        // Besides the step's end, two interior points of the dense output are checked, so that
        // a surface crossed twice within one long step (there and back) is still seen when the
        // crossings are a third of a step apart.
        let mut crossing = None;
        let mut bracket_end = info.t;
        for j in 1..=SAMPLES {
            let at = if j == SAMPLES {
                info.t
            } else {
                info.t_prev + (info.t - info.t_prev) * j as f64 / SAMPLES as f64
            };
            if at == info.t {
                point.copy_from_slice(stepper.state());
            } else {
                stepper.interpolate(at, &mut point);
            }
            crossing = find_crossing(model, &point, at, &near)?;
            if crossing.is_some() {
                bracket_end = at;
                break;
            }
        }
        let Some(first) = crossing else {
            if let ControlFlow::Break(time) =
                emit_through(model, stepper, &mut schedule, info.t, &mut buffer, &mut row)?
            {
                return Ok(HybridOutcome::Stopped { time });
            }
            if clocks.next() == Some(info.t) {
                let te = info.t;
                x.copy_from_slice(stepper.state());
                if row(model, te, &x).is_break() {
                    return Ok(HybridOutcome::Stopped { time: te });
                }
                model.stats.events += 1;
                if let Some(terminated) = clocks.fire(model, te, &mut x, &mut dx, &mut whens)? {
                    let _ = row(model, te, &x);
                    return Ok(terminated);
                }
                stepper.restart(te, &x)?;
                if row(model, te, &x).is_break() {
                    return Ok(HybridOutcome::Stopped { time: te });
                }
            }
            continue;
        };
        // Locate the earliest crossing in the step.
        let te = locate(model, stepper, info.t_prev, bracket_end, first, &near, &mut buffer)?;
        if let ControlFlow::Break(time) = emit_through(model, stepper, &mut schedule, te, &mut buffer, &mut row)? {
            return Ok(HybridOutcome::Stopped { time });
        }
        stepper.interpolate(te, &mut x);
        // The row just before the event, with the relations as they were.
        if row(model, te, &x).is_break() {
            return Ok(HybridOutcome::Stopped { time: te });
        }
        model.stats.events += 1;
        recent_events.push(te);
        if recent_events.len() > ACCUMULATION_COUNT {
            recent_events.remove(0);
            let span = recent_events[ACCUMULATION_COUNT - 1] - recent_events[0];
            if span <= ACCUMULATION_GAP * ACCUMULATION_COUNT as f64 * (1.0 + te.abs()) {
                let s = &events.surfaces[match first {
                    Crossing::Surface(k) => k,
                    Crossing::SlidingEnds(_) => model.sliding.as_ref().map_or(0, |s| s.surface),
                }];
                return Err(HybridError::Event {
                    code: "E0711",
                    time: te,
                    message: format!(
                        "events accumulate at t ≈ {te}: the last {ACCUMULATION_COUNT} events happened within {span:e} s (Zeno behaviour), the last at the relation `{}`",
                        s.text
                    ),
                    span: s.span,
                    help: "the model switches infinitely often in finite time (a bouncing ball coming to rest); add a condition that ends the switching, for example a when-clause that holds the state at rest below a small velocity".to_string(),
                });
            }
        }
        let before: Vec<i8> = model.signs.clone();
        match first {
            Crossing::SlidingEnds(positive) => {
                let since = model.sliding_since().unwrap_or(te);
                let k = model.sliding.take().map_or(0, |s| s.surface);
                let side = if positive { 1 } else { -1 };
                model.signs[k] = side;
                model.write_relations(k, side, None);
                model.stats.notes.push(format!(
                    "t = {te}: sliding on `{}` ends after {} s; the solution leaves on the {} side",
                    events.surfaces[k].text,
                    te - since,
                    if positive { "positive" } else { "negative" }
                ));
                near[k] = near[k].max(1e-8 * (1.0 + model.d[k].abs()));
            }
            Crossing::Surface(_) => {}
        }
        let sliding_surface = model.sliding.as_ref().map(|s| s.surface);
        if let Some(terminated) = event_iteration(model, te, &mut x, &mut dx, &mut whens, false)? {
            let _ = row(model, te, &x);
            return Ok(terminated);
        }
        // Surfaces that changed sign now may start sliding.
        let mut changed: Vec<usize> = (0..model.signs.len())
            .filter(|&k| model.signs[k] != before[k] && Some(k) != sliding_surface)
            .collect();
        if let Crossing::Surface(k) = first
            && !changed.contains(&k)
        {
            changed.push(k);
        }
        if model.sliding.is_none() {
            decide_sliding(model, te, &x, &before, &changed)?;
        }
        for (k, n) in near.iter_mut().enumerate() {
            if Some(k) != model.sliding.as_ref().map(|s| s.surface) {
                *n = n.min(hysteresis(model.d[k])).max(hysteresis(0.0));
            }
        }
        stepper.restart(te, &x)?;
        if row(model, te, &x).is_break() {
            return Ok(HybridOutcome::Stopped { time: te });
        }
    }
    // `terminal()` is true for one event at the end.
    if let Some((slot, _)) = events.terminal {
        x.copy_from_slice(stepper.state());
        model.ode.instance.set_work(slot, 1.0);
        let t = stepper.time();
        let outcome = event_iteration(model, t, &mut x, &mut dx, &mut whens, false)?;
        // The row after the final event shows what its when-clauses computed.
        let _ = row(model, t, &x);
        if let Some(terminated) = outcome {
            return Ok(terminated);
        }
    }
    Ok(HybridOutcome::Finished)
}

/// The slot an assignment or reinit changes (checked by the program builder: a work slot or a
/// state).
fn action_slot(program: &ExecProgram, action: &WhenAction) -> Option<Slot> {
    match action {
        WhenAction::Assign { var, .. } | WhenAction::Reinit { var, .. } => program.slot_of(*var),
        _ => None,
    }
}

/// The `sample(start, interval)` clocks: the index of each one's next tick, computed from the
/// index (not accumulated), so that the times do not drift.
struct Clocks {
    /// Work slot, start, interval, next index.
    clocks: Vec<(u32, f64, f64, u64)>,
    /// The time events `time - T` still ahead: their times.
    pending: Vec<f64>,
}

impl Clocks {
    fn new(model: &mut HybridModel<'_>, t0: f64, x: &[f64], dx: &mut [f64]) -> Result<Clocks, HybridError> {
        let mut clocks = Vec::new();
        for sample in &model.program.events().samples {
            let start = model.ode.instance.event_value(sample.start, sample.span, t0, x, dx)?;
            let interval = model
                .ode
                .instance
                .event_value(sample.interval, sample.span, t0, x, dx)?;
            if !(interval > 0.0 && interval.is_finite() && start.is_finite()) {
                return Err(HybridError::Event {
                    code: "E0713",
                    time: t0,
                    message: format!("sample needs a finite start and a positive interval, not ({start}, {interval})"),
                    span: sample.span,
                    help: "give the sampling interval a positive value".to_string(),
                });
            }
            // The first tick at or after the start time (within rounding of it counts).
            let k = ((t0 - start) / interval - 1e-9).ceil().max(0.0) as u64;
            clocks.push((sample.slot, start, interval, k));
        }
        let mut pending = Vec::new();
        for surface in &model.program.events().surfaces {
            if let Some(e) = surface.time_event {
                let at = model.ode.instance.event_value(e, surface.span, t0, x, dx)?;
                if at > t0 {
                    pending.push(at);
                }
            }
        }
        Ok(Clocks { clocks, pending })
    }

    fn time(&(_, start, interval, k): &(u32, f64, f64, u64)) -> f64 {
        start + k as f64 * interval
    }

    /// The next tick of any clock, or the next time event.
    fn next(&self) -> Option<f64> {
        self.clocks
            .iter()
            .map(Clocks::time)
            .chain(self.pending.iter().copied())
            .min_by(f64::total_cmp)
    }

    /// The time event at `t`: the clocks that tick now are true for one event iteration and
    /// false again after it (a second iteration settles what depends on them); surfaces
    /// `time - T` with `T = t` change sign in the iteration.
    fn fire(
        &mut self,
        model: &mut HybridModel<'_>,
        t: f64,
        x: &mut [f64],
        dx: &mut [f64],
        whens: &mut WhenState,
    ) -> Result<Option<HybridOutcome>, HybridError> {
        let ticking: Vec<usize> = (0..self.clocks.len())
            .filter(|&c| Clocks::time(&self.clocks[c]) == t)
            .collect();
        // Time events at `t` need no flag: their surfaces take their new sign in the iteration.
        self.pending.retain(|&at| at != t);
        for &c in &ticking {
            model.ode.instance.set_work(self.clocks[c].0, 1.0);
        }
        let outcome = event_iteration(model, t, x, dx, whens, false)?;
        for &c in &ticking {
            model.ode.instance.set_work(self.clocks[c].0, 0.0);
            self.clocks[c].3 += 1;
        }
        if outcome.is_some() {
            return Ok(outcome);
        }
        event_iteration(model, t, x, dx, whens, false)
    }
}

/// The sign surface `k` takes at value `d`: for a time event `time - T` the side time is
/// heading to (so that at `t = T` itself it already counts as passed, the event's
/// scheduled instant), otherwise [`sign_of`].
fn surface_sign(program: &ExecProgram, k: usize, d: f64) -> i8 {
    match program.events().surfaces.get(k) {
        Some(s) if s.time_event.is_some() => {
            if d >= 0.0 {
                1
            } else {
                -1
            }
        }
        _ => sign_of(d),
    }
}

/// Whether surface `k` is a scheduled time event (never located by root finding).
fn is_timed(program: &ExecProgram, k: usize) -> bool {
    program.events().surfaces.get(k).is_some_and(|s| s.time_event.is_some())
}

/// -1, 0 or 1.
fn sign_of(v: f64) -> i8 {
    if v > 0.0 {
        1
    } else if v < 0.0 {
        -1
    } else {
        0
    }
}

/// Rows at the output times up to `t`; `Break(time)` when the observer stopped.
fn emit_through(
    model: &mut HybridModel<'_>,
    stepper: &dyn Stepper,
    schedule: &mut Schedule<'_>,
    t: f64,
    buffer: &mut [f64],
    row: &mut impl FnMut(&mut HybridModel<'_>, f64, &[f64]) -> ControlFlow<()>,
) -> Result<ControlFlow<f64>, HybridError> {
    while let Some(time) = schedule.next_until(t) {
        if time == stepper.time() {
            buffer.copy_from_slice(stepper.state());
        } else {
            stepper.interpolate(time, buffer);
        }
        if row(model, time, buffer).is_break() {
            return Ok(ControlFlow::Break(time));
        }
    }
    Ok(ControlFlow::Continue(()))
}

/// The crossing at the end of a step to `(t, x)`, if any (the one of the lowest surface index;
/// [`locate`] then finds the earliest of all).
fn find_crossing(
    model: &mut HybridModel<'_>,
    x: &[f64],
    t: f64,
    near: &[f64],
) -> Result<Option<Crossing>, HybridError> {
    let mut dx = std::mem::take(&mut model.check_dx);
    let result = (|| {
        if let Some(k) = model.sliding.as_ref().map(|s| s.surface) {
            let alpha = model.sliding_rhs(k, t, x, &mut dx)?;
            if let Some(s) = &mut model.sliding {
                s.alpha = alpha;
            }
            // The sliding relations hold α now; the other surfaces are read with them.
            model.surfaces_at(t, x, &mut dx)?;
            if !(0.0..=1.0).contains(&alpha) {
                return Ok(Some(Crossing::SlidingEnds(alpha > 1.0)));
            }
        } else {
            model.surfaces_at(t, x, &mut dx)?;
        }
        let sliding = model.sliding.as_ref().map(|s| s.surface);
        Ok((0..model.signs.len())
            .find(|&k| {
                Some(k) != sliding && !is_timed(model.program, k) && crossed(model.signs[k], model.d[k], near[k])
            })
            .map(Crossing::Surface))
    })();
    model.check_dx = dx;
    result.map_err(HybridError::Evaluation)
}

/// Whether a surface with frozen sign `sign` has crossed when its value is `d`.
fn crossed(sign: i8, d: f64, near: f64) -> bool {
    match sign {
        0 => d.abs() > near,
        s => f64::from(s) * d < -near,
    }
}

/// The earliest event time in `(t_prev, t]`: for every surface that crossed at `t`, the root of
/// its function on the dense output by the Illinois method, and the smallest of those.
fn locate(
    model: &mut HybridModel<'_>,
    stepper: &dyn Stepper,
    t_prev: f64,
    t: f64,
    first: Crossing,
    near: &[f64],
    buffer: &mut [f64],
) -> Result<f64, HybridError> {
    // The candidates: every crossing at `t` (surfaces and the end of sliding).
    let mut candidates = vec![first];
    let sliding = model.sliding.as_ref().map(|s| s.surface);
    for (k, &near_k) in near.iter().enumerate() {
        if Some(k) != sliding
            && !is_timed(model.program, k)
            && crossed(model.signs[k], model.d[k], near_k)
            && !matches!(first, Crossing::Surface(j) if j == k)
        {
            candidates.push(Crossing::Surface(k));
        }
    }
    let mut earliest = t;
    for c in candidates {
        // g > 0 on the side the step started on, g < 0 after the crossing.
        let mut g = |model: &mut HybridModel<'_>, time: f64| -> Result<f64, HybridError> {
            stepper.interpolate(time, buffer);
            let mut dx = std::mem::take(&mut model.check_dx);
            let value = (|| match c {
                Crossing::Surface(k) => {
                    // Only this surface's function is evaluated (after the right-hand side).
                    let d = model.ode.instance.surface_at(k, time, buffer, &mut dx)?;
                    // The root is that of the surface itself; the hysteresis only decides whether
                    // a step's end counts as crossed.
                    Ok(match model.signs[k] {
                        0 => near[k] - d.abs(),
                        s => f64::from(s) * d,
                    })
                }
                Crossing::SlidingEnds(positive) => {
                    let k = sliding.unwrap_or(0);
                    let alpha = model.sliding_rhs(k, time, buffer, &mut dx)?;
                    Ok(if positive { 1.0 - alpha } else { alpha })
                }
            })();
            model.check_dx = dx;
            value.map_err(HybridError::Evaluation)
        };
        let (mut a, mut b) = (t_prev, earliest);
        let mut ga = g(model, a)?;
        let mut gb = g(model, b)?;
        if gb >= 0.0 {
            // Not crossed before the earliest time found so far.
            continue;
        }
        if ga <= 0.0 {
            // Already on the other side at the step's start: the event is there.
            earliest = a;
            continue;
        }
        let tolerance = 4.0 * f64::EPSILON * t.abs().max(1.0) + 1e-15;
        let mut side = 0;
        for _ in 0..200 {
            if b - a <= tolerance {
                break;
            }
            let mut m = (a * gb - b * ga) / (gb - ga);
            if !(m > a && m < b) {
                m = 0.5 * (a + b);
            }
            let gm = g(model, m)?;
            if gm < 0.0 {
                b = m;
                gb = gm;
                if side == -1 {
                    ga *= 0.5;
                }
                side = -1;
            } else {
                a = m;
                ga = gm;
                if side == 1 {
                    gb *= 0.5;
                }
                side = 1;
            }
        }
        earliest = b;
    }
    // Leave the model evaluated with the frozen relations (the sliding evaluation writes α).
    if let Some(k) = sliding
        && let Some(alpha) = model.sliding.as_ref().map(|s| s.alpha)
    {
        model.write_relations(k, 0, Some(alpha));
    }
    Ok(earliest)
}

/// The event iteration at `(t, x)`: relations from the surfaces, when-branches whose conditions
/// became true, until nothing changes. At the initial event (`initial`), conditions are only
/// recorded. Returns the outcome when `terminate` was called.
fn event_iteration(
    model: &mut HybridModel<'_>,
    t: f64,
    x: &mut [f64],
    dx: &mut [f64],
    whens: &mut WhenState,
    initial: bool,
) -> Result<Option<HybridOutcome>, HybridError> {
    let program = model.program;
    let events = program.events();
    let sliding = model.sliding.as_ref().map(|s| s.surface);
    let mut changing: Vec<usize> = Vec::new();
    for _ in 0..MAX_EVENT_ITERATIONS {
        if let Some(k) = sliding {
            model.sliding_rhs(k, t, x, dx)?;
        }
        model.surfaces_at(t, x, dx)?;
        // `edge` and `change` compare with the values before this pass.
        let mut previous_changed = false;
        for &(slot, e) in &events.previous {
            let value = model.ode.instance.event_value(e, program.model_span(), t, x, dx)?;
            if model.ode.instance.work().get(slot as usize) != Some(&value) {
                previous_changed = true;
                model.ode.instance.set_work(slot, value);
            }
        }
        changing.clear();
        for k in 0..model.signs.len() {
            if Some(k) == sliding {
                continue;
            }
            let s = surface_sign(program, k, model.d[k]);
            if s != model.signs[k] {
                model.signs[k] = s;
                model.write_relations(k, s, None);
                changing.push(k);
            }
        }
        if !changing.is_empty() {
            model.surfaces_at(t, x, dx)?;
        }
        // Conditions read the relation variables and discrete variables; all branch values
        // are computed before any action runs.
        let mut fired: Vec<(usize, usize)> = Vec::new();
        for (w, when) in events.whens.iter().enumerate() {
            let mut chosen = None;
            for (b, (condition, _)) in when.branches.iter().enumerate() {
                let value = model.ode.instance.event_value(*condition, when.span, t, x, dx)? != 0.0;
                if value && !whens.conditions[w][b] && chosen.is_none() && !initial {
                    chosen = Some(b);
                }
                whens.conditions[w][b] = value;
            }
            if let Some(b) = chosen {
                fired.push((w, b));
                accumulation(&mut whens.firings[w][b], t, when.span)?;
            }
        }
        // Assignments run in the order the program sorted them (each reads the new values of
        // those it depends on, and `pre(v)` before `v` changes); reinits take effect after all
        // of them, so every value is computed from the state before the event.
        let mut reinits: Vec<(u32, f64)> = Vec::new();
        let mut terminate: Option<String> = None;
        let mut discrete_changed = false;
        for &(w, b) in &fired {
            let when = &events.whens[w];
            for action in &when.branches[b].1 {
                match action {
                    WhenAction::Assign { value, span, .. } => {
                        let v = model.ode.instance.event_value(*value, *span, t, x, dx)?;
                        if let Some(Slot::Work(k)) = action_slot(program, action)
                            && model.ode.instance.work().get(k as usize) != Some(&v)
                        {
                            discrete_changed = true;
                            model.ode.instance.set_work(k, v);
                        }
                    }
                    WhenAction::Reinit { value, span, .. } => {
                        let v = model.ode.instance.event_value(*value, *span, t, x, dx)?;
                        if let Some(Slot::State(i)) = action_slot(program, action) {
                            reinits.push((i, v));
                        }
                    }
                    WhenAction::Assert {
                        condition,
                        message,
                        span,
                    } => {
                        if model.ode.instance.event_value(*condition, *span, t, x, dx)? == 0.0 {
                            return Err(HybridError::Evaluation(EvalFailure {
                                time: t,
                                kind: eqm_ir::failure::FailureKind::Assert {
                                    message: message.clone(),
                                    span: *span,
                                },
                                site: eqm_ir::failure::FailureSite::Event { span: *span },
                            }));
                        }
                    }
                    WhenAction::Terminate { message, .. } => terminate = Some(message.clone()),
                }
            }
        }
        for (i, v) in reinits {
            if let Some(state) = x.get_mut(i as usize) {
                *state = v;
            }
        }
        if let Some(message) = terminate {
            return Ok(Some(HybridOutcome::Terminated { time: t, message }));
        }
        if changing.is_empty() && fired.is_empty() && !discrete_changed && !previous_changed {
            model.surfaces_at(t, x, dx)?;
            return Ok(None);
        }
    }
    let names: Vec<String> = changing
        .iter()
        .take(4)
        .map(|&k| format!("`{}`", events.surfaces[k].text))
        .collect();
    let span = changing
        .first()
        .map_or(program.model_span(), |&k| events.surfaces[k].span);
    Err(HybridError::Event {
        code: "E0712",
        time: t,
        message: format!(
            "the event iteration did not settle after {MAX_EVENT_ITERATIONS} passes; still changing: {}",
            if names.is_empty() { "discrete variables".to_string() } else { names.join(", ") }
        ),
        span,
        help: "the when-clauses and relations keep triggering each other at the same time; check for a discrete variable that depends on itself without `pre`".to_string(),
    })
}

/// Records a firing at `t`; an error when the firings accumulate: at least [`ZENO_FIRINGS`] in
/// a row came closer together each time, and the geometric series of their gaps predicts the
/// accumulation point within [`ZENO_HORIZON`] (relative) of `t`. Stopping there, while the
/// motion is still far larger than rounding, is what keeps the solution from passing through
/// the surface unnoticed once the bounces become too small to detect.
fn accumulation(f: &mut Firings, t: f64, span: Span) -> Result<(), HybridError> {
    if let Some(last) = f.last {
        let gap = t - last;
        match f.gap {
            Some(previous) if gap < previous && previous > 0.0 => {
                f.shrinking += 1;
                let ratio = gap / previous;
                let remaining = gap * ratio / (1.0 - ratio);
                if f.shrinking >= ZENO_FIRINGS && remaining < ZENO_HORIZON * (1.0 + t.abs()) {
                    let limit = t + remaining;
                    return Err(HybridError::Event {
                        code: "E0711",
                        time: t,
                        message: format!(
                            "events accumulate at t ≈ {limit} (Zeno behaviour): this when-clause fired {} times, each time sooner after the previous one (last gap {gap:e} s)",
                            f.shrinking + 1
                        ),
                        span,
                        help: "the model switches infinitely often in finite time (a bouncing ball coming to rest); add a condition that ends the switching, for example a when-clause that holds the state at rest once the velocity is small".to_string(),
                    });
                }
            }
            _ => f.shrinking = 0,
        }
        f.gap = Some(gap);
    }
    f.last = Some(t);
    Ok(())
}

/// Surfaces exactly at zero at the start take the side their fields lead to, or slide.
fn decide_sides(model: &mut HybridModel<'_>, t: f64, x: &[f64], zero: &mut Vec<usize>) -> Result<(), HybridError> {
    let before = vec![0i8; model.signs.len()];
    let list = std::mem::take(zero);
    decide_sliding(model, t, x, &before, &list)
}

/// For each surface in `changed` (its frozen sign before the event in `before`): when the
/// fields on both sides push the solution back onto it, sliding starts; when the side it is on
/// now pushes it back and the other does not, it takes the other side. Sliding on more than
/// one surface at once is an error.
fn decide_sliding(
    model: &mut HybridModel<'_>,
    t: f64,
    x: &[f64],
    before: &[i8],
    changed: &[usize],
) -> Result<(), HybridError> {
    let events = model.program.events();
    let mut slides: Vec<usize> = Vec::new();
    for &k in changed {
        let now = model.signs[k];
        let (a_plus, a_minus) = model.sides(k, t, x)?;
        // Restore the relations of the side it is on.
        model.write_relations(k, now, None);
        let pushed_back_from_plus = a_plus < 0.0;
        let pushed_back_from_minus = a_minus > 0.0;
        if pushed_back_from_plus && pushed_back_from_minus {
            slides.push(k);
        } else if now == 0 || before[k] == 0 {
            // On the surface: leave towards the side whose field points away from it.
            let side = if !pushed_back_from_plus && a_plus > 0.0 {
                1
            } else if !pushed_back_from_minus && a_minus < 0.0 {
                -1
            } else {
                now
            };
            if side != 0 {
                model.signs[k] = side;
                model.write_relations(k, side, None);
            }
        }
    }
    match slides.as_slice() {
        [] => Ok(()),
        [k] => {
            let k = *k;
            let mut dx = vec![0.0; x.len()];
            let alpha = model.sliding_rhs(k, t, x, &mut dx)?;
            model.sliding = Some(Sliding {
                surface: k,
                alpha,
                since: t,
            });
            model.stats.notes.push(format!(
                "t = {t}: the fields on both sides of `{}` point towards it: sliding mode (Filippov) starts",
                events.surfaces[k].text
            ));
            Ok(())
        }
        [k, others @ ..] => {
            let names: Vec<String> = std::iter::once(*k)
                .chain(others.iter().copied())
                .take(4)
                .map(|j| format!("`{}`", events.surfaces[j].text))
                .collect();
            Err(HybridError::Event {
                code: "E0710",
                time: t,
                message: format!(
                    "the solution is pushed onto several switching surfaces at once ({}), where sliding mode is not defined",
                    names.join(", ")
                ),
                span: events.surfaces[*k].span,
                help: "regularise one of the switches (for example with a smooth approximation inside noEvent) or change the model so that the surfaces are not met together".to_string(),
            })
        }
    }
}

impl HybridModel<'_> {
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
