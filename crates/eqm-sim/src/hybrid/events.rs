//! The event iteration of a hybrid run: relations updated from the surfaces, when-branches
//! whose conditions became true fired with `pre` semantics, until nothing changes; the
//! `sample` clocks and time events; and the detection of an accumulation of events.
//!
//! Input: the hybrid model at an event instant. Output: its discrete values and states after
//! the event, or the outcome of `terminate`, or a diagnostic-bearing [`HybridError`]. Finding
//! when an event happens is `crossing`'s job.

use super::*;

/// The relative distance within which time events are one event (a few roundings of a time).
const COINCIDENT: f64 = 16.0 * f64::EPSILON;

/// The slot an assignment or reinit changes (checked by the program builder: a work slot or a
/// state).
pub(super) fn action_slot(program: &ExecProgram, action: &WhenAction) -> Option<Slot> {
    match action {
        WhenAction::Assign { var, .. } | WhenAction::Reinit { var, .. } => program.slot_of(*var),
        _ => None,
    }
}

/// The `sample(start, interval)` clocks: the index of each one's next tick, computed from the
/// index (not accumulated), so that the times do not drift.
pub(super) struct Clocks {
    /// Work slot, start, interval, next index.
    pub(super) clocks: Vec<(u32, f64, f64, u64)>,
    /// The time events `time - T` still ahead whose `T` reads parameters only: their times,
    /// computed at the start.
    pub(super) pending: Vec<f64>,
    /// Those whose `T` reads discrete-time values: recomputed after every event.
    pub(super) moving: Vec<f64>,
    /// A time event `time - T` has `T` at the start time: its relation changes right after it.
    pub(super) at_start: bool,
}

impl Clocks {
    pub(super) fn new(model: &mut HybridModel<'_>, t0: f64, x: &[f64], dx: &mut [f64]) -> Result<Clocks, HybridError> {
        let mut clocks = Vec::new();
        for sample in &model.program.events().samples {
            let start = model.ode.instance.event_value(sample.start, sample.span, t0, x, dx)?;
            let interval = model
                .ode
                .instance
                .event_value(sample.interval, sample.span, t0, x, dx)?;
            if !(interval > 0.0 && interval.is_finite() && start.is_finite()) {
                return Err(HybridError::Event {
                    code: "E0714",
                    time: t0,
                    message: format!("sample needs a finite start and a positive interval, not ({start}, {interval})"),
                    span: sample.span,
                    help: "give the sampling interval a positive value".to_string(),
                });
            }
            // The first tick at or after the start time (within rounding of it counts); where
            // the run resumes an earlier one, the tick at the start was that run's.
            let k = if model.watch.resume {
                ((t0 - start) / interval + 1e-9).floor() + 1.0
            } else {
                ((t0 - start) / interval - 1e-9).ceil()
            };
            let k = k.max(0.0) as u64;
            clocks.push((sample.slot, start, interval, k));
        }
        let (mut pending, mut moving) = (Vec::new(), Vec::new());
        let mut at_start = false;
        for surface in &model.program.events().surfaces {
            if let Some(e) = surface.time_event {
                let at = model.ode.instance.event_value(e, surface.span, t0, x, dx)?;
                if at > t0 {
                    if surface.time_moves { &mut moving } else { &mut pending }.push(at);
                }
                // A time event at the start of a resumed run happened in the earlier run.
                at_start |= at == t0 && !model.watch.resume;
            }
        }
        Ok(Clocks {
            clocks,
            pending,
            moving,
            at_start,
        })
    }

    /// The times of the time events `time - T` ahead of an event at `t` whose `T` reads
    /// discrete-time values, which the event's iteration may have changed (`T0 + Trising` of a
    /// pulse whose period began now).
    pub(super) fn refresh(
        &mut self,
        model: &mut HybridModel<'_>,
        t: f64,
        x: &[f64],
        dx: &mut [f64],
    ) -> Result<(), HybridError> {
        self.moving.clear();
        for surface in model.program.events().surfaces.iter().filter(|s| s.time_moves) {
            if let Some(e) = surface.time_event {
                let at = model.ode.instance.event_value(e, surface.span, t, x, dx)?;
                if at > t {
                    self.moving.push(at);
                }
            }
        }
        Ok(())
    }

    pub(super) fn time(&(_, start, interval, k): &(u32, f64, f64, u64)) -> f64 {
        start + k as f64 * interval
    }

    /// The next tick of any clock, or the next time event. Events within a rounding of the
    /// first (a tick at `0.2 + 1*0.4 = 0.6000000000000001` and a time event at `0.5 + 0.1 =
    /// 0.6`) are one event, at the last of them: no step could separate them, and at the last
    /// one every `time - T` among them has passed zero.
    pub(super) fn next(&self) -> Option<f64> {
        let times = || {
            let ahead = self.pending.iter().chain(&self.moving).copied();
            self.clocks.iter().map(Clocks::time).chain(ahead)
        };
        let first = times().min_by(f64::total_cmp)?;
        let window = first + COINCIDENT * first.abs().max(1.0);
        times().filter(|&at| at <= window).max_by(f64::total_cmp)
    }

    /// The time event at `t`: the clocks that tick now are true for one event iteration and
    /// false again after it (a second iteration settles what depends on them); surfaces
    /// `time - T` with `T = t` change sign in the iteration.
    pub(super) fn fire(
        &mut self,
        model: &mut HybridModel<'_>,
        t: f64,
        x: &mut [f64],
        dx: &mut [f64],
        whens: &mut WhenState,
    ) -> Result<Option<HybridOutcome>, HybridError> {
        // The ticks and time events up to `t` are this event (see `next`), also those a
        // rounding after it (a caller's time `0.1 + 0.2` for the tick `3·0.1`).
        let ticking: Vec<usize> = (0..self.clocks.len())
            .filter(|&c| due_by(Clocks::time(&self.clocks[c]), t))
            .collect();
        capture_left_limits(model, t, x, dx)?;
        // Time events at `t` need no flag: their surfaces take their new sign in the iteration.
        self.pending.retain(|&at| !due_by(at, t));
        self.moving.retain(|&at| !due_by(at, t));
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

/// Whether a time event at `at` is due at `t`: at or before it, or within a rounding after it
/// (four units in the last place of `t`), where the same instant reached by another sum of
/// steps lies.
pub(super) fn due_by(at: f64, t: f64) -> bool {
    at <= t + 4.0 * f64::EPSILON * t.abs().max(1.0)
}

/// Sets the `pre(e)` values of continuous-time expressions to their values at `(t, x)` with the
/// relations as they were before the event: their left limits, held through the event
/// iteration that follows.
pub(super) fn capture_left_limits(
    model: &mut HybridModel<'_>,
    t: f64,
    x: &[f64],
    dx: &mut [f64],
) -> Result<(), HybridError> {
    let program = model.program;
    if !program.events().previous.iter().any(|p| p.left_limit) {
        return Ok(());
    }
    // Every variable at `(t, x)`, the eliminated aliases too, before the event changes any.
    model.surfaces_at(t, x, dx)?;
    for p in program.events().previous.iter().filter(|p| p.left_limit) {
        let value = model.ode.instance.event_value(p.expr, program.model_span(), t, x, dx)?;
        model.ode.instance.set_work(p.slot, value);
    }
    Ok(())
}

/// The event iteration at `(t, x)`: relations from the surfaces, when-branches whose conditions
/// became true, until nothing changes. At the initial event (`initial`), conditions are only
/// recorded. Returns the outcome when `terminate` was called.
///
/// One pass solves the active equations with `pre` held, in causal order: the clauses whose
/// conditions rose (against their values before the pass) fire, and their assignments may make
/// further conditions rise in the same pass (a `change(tick)` of a `tick` another clause
/// assigns, a condition reading a variable assigned now), which fire in turn. A condition that
/// reads what another clause assigns is evaluated only once that clause has fired or not, so
/// it sees the value of this event, not the one before it. After the pass, the values `edge`
/// and `change` compare with become the current ones (`pre(v) := v`), and another pass follows
/// while anything changed.
///
/// While it runs, `$event` is true (1, or 2 at the initial event, where a time event's
/// relation has its literal value as in `update_relations`): the tests of algorithm sections
/// whose surfaces read a value the section assigned before the test are then literal, so that
/// each statement sees what those before it assigned in the same pass.
pub(super) fn event_iteration(
    model: &mut HybridModel<'_>,
    t: f64,
    x: &mut [f64],
    dx: &mut [f64],
    whens: &mut WhenState,
    initial: bool,
) -> Result<Option<HybridOutcome>, HybridError> {
    let flag = model.program.events().event.map(|(slot, _)| slot);
    if let Some(slot) = flag {
        model.ode.instance.set_work(slot, if initial { 2.0 } else { 1.0 });
    }
    let outcome = iterate(model, t, x, dx, whens, initial);
    if let Some(slot) = flag {
        model.ode.instance.set_work(slot, 0.0);
        // The values after the event as the run reads them between events, with the
        // relations frozen at what the last pass tested.
        if outcome.is_ok() {
            model.surfaces_at(t, x, dx)?;
        }
    }
    outcome
}

/// The passes of [`event_iteration`].
fn iterate(
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
    // The round of the pass in which each clause fired.
    let mut fired_in_pass: Vec<Option<usize>> = vec![None; events.whens.len()];
    let mut now: Vec<Vec<bool>> = whens.conditions.clone();
    for _ in 0..MAX_EVENT_ITERATIONS {
        fired_in_pass.fill(None);
        let mut fired_any = false;
        let mut discrete_changed = false;
        let mut reinits: Vec<(u32, f64)> = Vec::new();
        let mut terminate: Option<String> = None;
        let mut fired_in_this_pass: Vec<(usize, usize)> = Vec::new();
        changing.clear();
        // Rounds within the pass: relations, conditions, the actions of the clauses that rose.
        for round in 0..=events.whens.len() {
            if let Some(k) = sliding {
                model.sliding_rhs(k, t, x, dx)?;
            }
            model.surfaces_at(t, x, dx)?;
            if update_relations(model, sliding, initial, &mut changing) {
                model.surfaces_at(t, x, dx)?;
            }
            if round == 0
                && !model.watch.values.is_empty()
                && super::mixed::settle_relations(model, sliding, initial, &mut changing, t, x, dx)?
            {
                // The structure this program has no longer holds: the caller switches to the
                // program of the new mode with the `pre` values of this pass.
                return Ok(None);
            }
            let fired = rising_branches(model, t, x, dx, whens, &mut now, &mut fired_in_pass, round, initial)?;
            if fired.is_empty() {
                break;
            }
            fired_any = true;
            discrete_changed |= run_assignments(model, &fired, t, x, dx)?;
            fired_in_this_pass.extend_from_slice(&fired);
            discrete_changed |= settle_fired(model, &fired_in_this_pass, t, x, dx, sliding, &mut changing)?;
            run_actions(model, &fired, t, x, dx, &mut reinits, &mut terminate)?;
        }
        fired_before_its_inputs(model, t, x, dx, &fired_in_pass, &now)?;
        for (w, values) in now.iter().enumerate() {
            whens.conditions[w].copy_from_slice(values);
        }
        for &(i, v) in &reinits {
            if let Some(state) = x.get_mut(i as usize) {
                *state = v;
            }
        }
        if let Some(message) = terminate {
            return Ok(Some(HybridOutcome::Terminated { time: t, message }));
        }
        if !reinits.is_empty() {
            model.surfaces_at(t, x, dx)?;
        }
        let settled = changing.is_empty() && !fired_any && !discrete_changed && reinits.is_empty();
        let previous_changed = update_previous(model, t, x, dx, settled)?;
        if settled && !previous_changed {
            model.surfaces_at(t, x, dx)?;
            return Ok(None);
        }
    }
    Err(unsettled(program, &changing, t))
}

/// The equations of the when-branches `fired` in this pass hold together with the relations
/// and integer parts (`integer(e)`, `floor(e)`, ...) of this event's values: an
/// assignment that reads one computed from what the clauses assign (`n = pre(n) + integer(load)`
/// with `load` computed from `n`) is solved by holding them, solving the assignments,
/// recomputing them, and again until they keep their values. `pre` values are held throughout.
/// Returns whether an assigned value changed; an error names the surfaces still changing when
/// the iteration does not settle.
fn settle_fired(
    model: &mut HybridModel<'_>,
    fired: &[(usize, usize)],
    t: f64,
    x: &mut [f64],
    dx: &mut [f64],
    sliding: Option<usize>,
    changing: &mut Vec<usize>,
) -> Result<bool, HybridError> {
    let program = model.program;
    let mut assigned_changed = false;
    let mut moved_now: Vec<usize> = Vec::new();
    for _ in 0..MAX_EVENT_ITERATIONS {
        model.surfaces_at(t, x, dx)?;
        moved_now.clear();
        let relations_moved = update_relations(model, sliding, false, &mut moved_now);
        for &k in &moved_now {
            if !changing.contains(&k) {
                changing.push(k);
            }
        }
        let mut parts_moved = false;
        for p in program.events().previous.iter().filter(|p| p.integer_part) {
            let value = model.ode.instance.event_value(p.expr, program.model_span(), t, x, dx)?;
            if model.ode.instance.work().get(p.slot as usize) != Some(&value) {
                parts_moved = true;
                model.ode.instance.set_work(p.slot, value);
            }
        }
        if !relations_moved && !parts_moved {
            return Ok(assigned_changed);
        }
        // The variables computed from the relations and integer parts, for the assignments.
        model.surfaces_at(t, x, dx)?;
        if !run_assignments(model, fired, t, x, dx)? {
            return Ok(assigned_changed);
        }
        assigned_changed = true;
    }
    Err(unsettled(program, &moved_now, t))
}

/// Sets each relation (but those of the sliding, the held and the pinned surfaces) from its
/// surface's value in `model.d`, adding the surfaces whose relation changed to `changing`.
/// Returns whether any changed.
pub(super) fn update_relations(
    model: &mut HybridModel<'_>,
    sliding: Option<usize>,
    initial: bool,
    changing: &mut Vec<usize>,
) -> bool {
    let program = model.program;
    let mut relations_changed = false;
    for k in 0..model.signs.len() {
        if Some(k) == sliding || Some(k) == model.held || model.is_pinned(k) {
            continue;
        }
        // At the initial event every relation has its literal value (`time > 0` is false at
        // 0, as in the initialization); a time event's surface counts as crossed at its
        // time only afterwards.
        let s = if initial {
            sign_of(model.d[k])
        } else {
            surface_sign(program, k, model.d[k])
        };
        if s != model.signs[k] {
            model.signs[k] = s;
            model.write_relations(k, s, None);
            if !changing.contains(&k) {
                changing.push(k);
            }
            relations_changed = true;
        }
    }
    relations_changed
}

/// The when-branches that fire in this round, as (clause, branch): per clause that has not
/// fired in this pass, its first branch whose condition is true now and was not before the
/// pass (none at the initial event, where conditions are only recorded). The conditions read
/// the relation variables and discrete variables; their values go to `now`. The clauses are
/// taken in causal order, and one whose conditions read what a clause that fires in this round
/// assigns waits for the next round, after those assignments (so does one waiting on a clause
/// that waits).
#[allow(clippy::too_many_arguments)]
fn rising_branches(
    model: &mut HybridModel<'_>,
    t: f64,
    x: &[f64],
    dx: &mut [f64],
    whens: &mut WhenState,
    now: &mut [Vec<bool>],
    fired_in_pass: &mut [Option<usize>],
    round: usize,
    initial: bool,
) -> Result<Vec<(usize, usize)>, HybridError> {
    let events = model.program.events();
    let mut fired: Vec<(usize, usize)> = Vec::new();
    let mut waiting = vec![false; events.whens.len()];
    for &w in &events.when_order {
        let when = &events.whens[w];
        // A clause that fired in this pass keeps the condition values it fired with:
        // its branches that rise only with this pass's assignments rise in the next.
        if fired_in_pass[w].is_some() {
            continue;
        }
        if when
            .after
            .iter()
            .any(|&u| waiting[u] || fired_in_pass[u] == Some(round))
        {
            waiting[w] = true;
            continue;
        }
        let mut chosen = None;
        for (b, (condition, _)) in when.branches.iter().enumerate() {
            let value = model.ode.instance.event_value(*condition, when.span, t, x, dx)? != 0.0;
            now[w][b] = value;
            if value && !whens.conditions[w][b] && chosen.is_none() && !initial {
                chosen = Some(b);
            }
        }
        if let Some(b) = chosen {
            fired.push((w, b));
            fired_in_pass[w] = Some(round);
            super::zeno::accumulation(&mut whens.firings[w][b], t, when.span)?;
        }
    }
    // The order of the assignments does not depend on the order of the clauses.
    fired.sort_unstable();
    Ok(fired)
}

/// An error when a clause fired in this pass with conditions that the assignments of a clause
/// firing in the same or a later round have changed since: the clauses read each other's
/// assignments in a cycle (their order cannot be causal), and the event has no solution the
/// iteration reached. A cycle whose later assignments leave the earlier conditions as they
/// were is consistent and passes.
fn fired_before_its_inputs(
    model: &mut HybridModel<'_>,
    t: f64,
    x: &[f64],
    dx: &mut [f64],
    fired_in_pass: &[Option<usize>],
    now: &[Vec<bool>],
) -> Result<(), HybridError> {
    let events = model.program.events();
    for (w, when) in events.whens.iter().enumerate() {
        let Some(round) = fired_in_pass[w] else { continue };
        if !when.after.iter().any(|&u| fired_in_pass[u].is_some_and(|r| r >= round)) {
            continue;
        }
        for (b, (condition, _)) in when.branches.iter().enumerate() {
            let value = model.ode.instance.event_value(*condition, when.span, t, x, dx)? != 0.0;
            if value != now[w][b] {
                return Err(HybridError::Event {
                    code: "E0712",
                    time: t,
                    message: "this when-clause fired with a value that another when-clause changed later at the same event: their conditions read each other's assignments in a cycle".to_string(),
                    span: when.span,
                    help: "break the cycle with `pre(...)` on one of the values the conditions read".to_string(),
                });
            }
        }
    }
    Ok(())
}

/// Runs the assignments of the branches that `fired`. Returns whether a discrete value
/// changed.
///
/// Assignments run in the order the program sorted them (each reads the new values of those it
/// depends on, and `pre(v)` before `v` changes), or, when one of them reads a continuous
/// variable computed from an assigned one, are solved together with the continuous equations;
/// reinits take effect after the pass, so every value is computed from the state before the
/// event.
fn run_assignments(
    model: &mut HybridModel<'_>,
    fired: &[(usize, usize)],
    t: f64,
    x: &mut [f64],
    dx: &mut [f64],
) -> Result<bool, HybridError> {
    let program = model.program;
    let solved = fired.iter().any(|&(w, b)| program.events().whens[w].coupled[b]);
    let assignments = coupled::assignments(program, fired);
    if solved {
        return coupled::solve(model, &assignments, t, x, dx);
    }
    // The clauses that fire together are one system: an assignment of one clause may read what
    // another one assigns at this event, whichever is written first. Each clause's assignments
    // are sorted already, so sweeps over all of them in turn settle after as many sweeps as the
    // clauses depend on each other in a row (`pre(v)` is held during the pass, so a sweep
    // repeats what it computed). Sweeps that still change values after that many have met a
    // cycle: the clauses assign each other's values with no solution the sweeps reach, which is
    // reported rather than stopped at an arbitrary point.
    let mut discrete_changed = false;
    let mut unsettled = None;
    for _ in 0..=assignments.len() {
        unsettled = None;
        for a in &assignments {
            let v = model.ode.instance.event_value(a.value, a.span, t, x, dx)?;
            if model.ode.instance.work().get(a.slot as usize) != Some(&v) {
                unsettled.get_or_insert(a.span);
                model.ode.instance.set_work(a.slot, v);
            }
        }
        discrete_changed |= unsettled.is_some();
        if unsettled.is_none() || fired.len() == 1 {
            break;
        }
    }
    if let Some(span) = unsettled.filter(|_| fired.len() > 1) {
        return Err(HybridError::Event {
            code: "E0712",
            time: t,
            message:
                "the when-clauses that fire at this instant assign each other's values in a cycle that does not settle"
                    .to_string(),
            span,
            help: "break the cycle with `pre(...)` on one of the values read".to_string(),
        });
    }
    Ok(discrete_changed)
}

/// The other actions of the branches that `fired`: the values of their reinits (into
/// `reinits`, applied after the pass), their assertions (an error when one fails), the
/// message of a `terminate` (into `terminate`) and the lines they print (into the run's
/// statistics, which the row writer hands on).
fn run_actions(
    model: &mut HybridModel<'_>,
    fired: &[(usize, usize)],
    t: f64,
    x: &[f64],
    dx: &mut [f64],
    reinits: &mut Vec<(u32, f64)>,
    terminate: &mut Option<String>,
) -> Result<(), HybridError> {
    let program = model.program;
    for &(w, b) in fired {
        let when = &program.events().whens[w];
        for action in &when.branches[b].1 {
            match action {
                WhenAction::Assign { .. } => {}
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
                        let message = message.render(&mut |e| model.ode.instance.event_value(e, *span, t, x, dx).ok());
                        return Err(HybridError::Evaluation(EvalFailure {
                            time: t,
                            kind: eqm_ir::failure::FailureKind::Assert { message, span: *span },
                            site: eqm_ir::failure::FailureSite::Event { span: *span },
                        }));
                    }
                }
                WhenAction::Terminate { message, span } => {
                    *terminate = Some(message.render(&mut |e| model.ode.instance.event_value(e, *span, t, x, dx).ok()));
                }
                WhenAction::Print { message, guard, span } => {
                    if guard_holds(model, *guard, *span, t, x, dx)? {
                        let text = message.render(&mut |e| model.ode.instance.event_value(e, *span, t, x, dx).ok());
                        model.stats.printed.push(super::PrintedLine { time: t, text });
                    }
                }
                // The call runs once, for what it does; the lines its functions print follow
                // those printed before it at this event.
                WhenAction::Call { call, guard, span } => {
                    if guard_holds(model, *guard, *span, t, x, dx)? {
                        let _ = model.ode.instance.take_printed();
                        let result = model.ode.instance.event_value(*call, *span, t, x, dx);
                        let lines = model.ode.instance.take_printed();
                        model
                            .stats
                            .printed
                            .extend(lines.into_iter().map(|text| super::PrintedLine { time: t, text }));
                        result?;
                    }
                }
            }
        }
    }
    Ok(())
}

/// Whether an action's guard (the if-statements around it in its when-statement) holds at
/// the event; an action without one always runs.
fn guard_holds(
    model: &mut HybridModel<'_>,
    guard: Option<eqm_ir::expr::ExprId>,
    span: eqm_diag::source::Span,
    t: f64,
    x: &[f64],
    dx: &mut [f64],
) -> Result<bool, HybridError> {
    match guard {
        Some(g) => Ok(model.ode.instance.event_value(g, span, t, x, dx)? != 0.0),
        None => Ok(true),
    }
}

/// `pre(v) := v` for the values `edge` and `change` compare with, and for the left limits too
/// once a pass has changed nothing else (`settled`): the event iteration ends only when
/// `pre(v) == v` for every `v` read by `pre` (a Boolean computed by an equation, read as
/// `pre(u)`, is `u` again after the event, not its value before it until the next event).
/// Returns whether any changed.
fn update_previous(
    model: &mut HybridModel<'_>,
    t: f64,
    x: &[f64],
    dx: &mut [f64],
    settled: bool,
) -> Result<bool, HybridError> {
    let program = model.program;
    let mut previous_changed = false;
    for &ExecPrevious { slot, expr, .. } in program.events().previous.iter().filter(|p| !p.left_limit || settled) {
        let value = model.ode.instance.event_value(expr, program.model_span(), t, x, dx)?;
        if model.ode.instance.work().get(slot as usize) != Some(&value) {
            previous_changed = true;
            model.ode.instance.set_work(slot, value);
        }
    }
    Ok(previous_changed)
}

/// The error of an event iteration that did not settle at `t`, naming the surfaces whose
/// relations were `changing` in its last pass.
fn unsettled(program: &ExecProgram, changing: &[usize], t: f64) -> HybridError {
    let events = program.events();
    let names: Vec<String> = changing
        .iter()
        .take(4)
        .map(|&k| format!("`{}`", events.surfaces[k].text))
        .collect();
    let span = changing
        .first()
        .map_or(program.model_span(), |&k| events.surfaces[k].span);
    HybridError::Event {
        code: "E0712",
        time: t,
        message: format!(
            "the event iteration did not settle after {MAX_EVENT_ITERATIONS} passes; still changing: {}",
            if names.is_empty() { "discrete variables".to_string() } else { names.join(", ") }
        ),
        span,
        help: "the when-clauses and relations keep triggering each other at the same time; check for a discrete variable that depends on itself without `pre`".to_string(),
    }
}
