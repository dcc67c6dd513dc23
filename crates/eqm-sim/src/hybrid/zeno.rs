//! Accumulations of events (Zeno behaviour): when a when-branch's firings come closer
//! together in a geometric series, and whether the model's own equations end them.
//!
//! Input: the firings of each when-branch, the model at each event and at each step end.
//! Output: nothing while the run may go on; [`HybridError`] `E0711` where the events accumulate
//! and nothing in the model ends them. It deliberately does not change the model's values: a
//! model that accumulates events is either ended by its own equations or stopped.
//!
//! Once ten firings in a row come closer each time and their series predicts the limit within
//! [`ZENO_HORIZON`], the branch is watched rather than stopped at once: a model may end the
//! accumulation itself (a ball whose `flying = not (h <= 0 and v <= 0)` switches gravity off
//! when it no longer rises), which happens only as the bounces fall below what the run can
//! resolve, after the limit is predicted. The run goes on past the limit by as much time as was
//! left when the watch began; there the surfaces of the branch's condition must move slower
//! than right after its last firing (the motion came to rest at the limit). Where they still
//! move as fast (the ideal bouncing ball, which after its last detectable bounce falls through
//! the floor), the run stops with `E0711` at the predicted limit, with the rows up to it; so it
//! does where the events come closer than a rounding of time, or keep coming for
//! [`ZENO_WATCHED`] more firings.

use super::*;
use eqm_ir::expr::FxHashSet;

/// How many more firings a watched accumulation may take before the run stops.
const ZENO_WATCHED: usize = 400;
/// Events closer than this (relative to the time) cannot be told apart any more.
const ZENO_RESOLUTION: f64 = f64::EPSILON;

/// Records a firing of a branch at `t`; an error when the firings accumulate beyond what the
/// run can follow (see the module's description).
pub(super) fn accumulation(f: &mut Firings, t: f64, span: Span) -> Result<(), HybridError> {
    if let Some(last) = f.last {
        let gap = t - last;
        match f.gap {
            Some(previous) if gap < previous && previous > 0.0 => {
                f.shrinking += 1;
                let ratio = gap / previous;
                let remaining = gap * ratio / (1.0 - ratio);
                if f.shrinking >= ZENO_FIRINGS && remaining < ZENO_HORIZON * (1.0 + t.abs()) {
                    if f.limit.is_none() {
                        f.margin = remaining;
                        f.watched = 0;
                    }
                    f.limit = Some(t + remaining);
                    f.watched += 1;
                    f.speed = None;
                    if f.watched > ZENO_WATCHED || gap <= ZENO_RESOLUTION * (1.0 + t.abs()) {
                        f.gap = Some(gap);
                        return Err(zeno_error(f, span));
                    }
                }
            }
            // A watch goes on: near the limit the gaps are no longer regular (a bounce
            // lost in rounding), and only the run past the limit tells whether it was one.
            _ => f.shrinking = 0,
        }
        f.gap = Some(gap);
    }
    f.last = Some(t);
    Ok(())
}

/// The error of an accumulation the run cannot pass.
fn zeno_error(f: &Firings, span: Span) -> HybridError {
    let limit = f.limit.or(f.last).unwrap_or(0.0);
    let gap = f.gap.unwrap_or(0.0);
    HybridError::Event {
        code: "E0711",
        time: f.last.unwrap_or(limit),
        message: format!(
            "events accumulate at t ≈ {limit} (Zeno behaviour): this when-clause fired {} times, each time sooner after the previous one (last gap {gap:e} s), and nothing in the model brings the motion to rest there",
            f.shrinking.max(ZENO_FIRINGS + f.watched.saturating_sub(1)) + 1
        ),
        span,
        help: "the model switches infinitely often in finite time (a bouncing ball coming to rest); add a condition that ends the switching, for example a when-clause that holds the state at rest once the velocity is small".to_string(),
    }
}

impl WhenState {
    /// Whether a when-branch's accumulation is being watched.
    pub(super) fn watching(&self) -> bool {
        self.firings.iter().flatten().any(|f| f.limit.is_some())
    }
}

/// The surfaces the condition of branch `b` of clause `w` reads; every surface where it reads
/// none directly (a Boolean variable an equation computes from relations).
fn condition_surfaces(program: &ExecProgram, w: usize, b: usize) -> Vec<usize> {
    let events = program.events();
    let mut vars = Vec::new();
    program.exprs().vars_in(events.whens[w].branches[b].0, &mut vars);
    let read: FxHashSet<_> = vars.into_iter().collect();
    let direct: Vec<usize> = (0..events.surfaces.len())
        .filter(|&k| events.surfaces[k].relation_vars.iter().any(|v| read.contains(v)))
        .collect();
    match direct.is_empty() {
        true => (0..events.surfaces.len()).collect(),
        false => direct,
    }
}

/// The fastest motion of the surfaces of branch `b` of clause `w` at `(t, x)`.
fn condition_speed(
    model: &mut HybridModel<'_>,
    w: usize,
    b: usize,
    t: f64,
    x: &[f64],
    dx: &mut [f64],
) -> Result<f64, HybridError> {
    let surfaces = condition_surfaces(model.program, w, b);
    model.surfaces_at(t, x, dx)?;
    let field = dx.to_vec();
    let mut speed = 0.0f64;
    for k in surfaces {
        let d0 = model.d[k];
        speed = speed.max(model.directional(k, t, x, &field, d0)?.abs());
    }
    // The surfaces again at the point itself (the difference quotient probed beside it).
    model.surfaces_at(t, x, dx)?;
    Ok(speed)
}

/// After the event at `(t, x)`: the speed of the surfaces of each watched branch that fired in
/// it, right after the firing.
pub(super) fn measure_after_event(
    model: &mut HybridModel<'_>,
    whens: &mut WhenState,
    t: f64,
    x: &[f64],
    dx: &mut [f64],
) -> Result<(), HybridError> {
    for w in 0..whens.firings.len() {
        for b in 0..whens.firings[w].len() {
            let f = whens.firings[w][b];
            if f.limit.is_some() && f.speed.is_none() && f.last == Some(t) {
                whens.firings[w][b].speed = Some(condition_speed(model, w, b, t, x, dx)?);
            }
        }
    }
    Ok(())
}

/// At the end `t` of a step: each watched accumulation the run has passed by its margin is
/// over, ended by the model where its surfaces came to rest, or an error with the time up to
/// which the rows may be written (the predicted limit).
pub(super) fn passed_accumulations(
    model: &mut HybridModel<'_>,
    whens: &mut WhenState,
    t: f64,
    x: &[f64],
    dx: &mut [f64],
) -> Result<(), (f64, HybridError)> {
    for w in 0..whens.firings.len() {
        for b in 0..whens.firings[w].len() {
            let f = whens.firings[w][b];
            let Some(limit) = f.limit else { continue };
            if t <= limit + f.margin {
                continue;
            }
            // A branch that fired after its limit and margin was not accumulating there (the
            // limit, predicted from the last regular gaps, may come a little early).
            let fired_after = f.last.is_some_and(|last| last > limit + f.margin);
            let speed = condition_speed(model, w, b, t, x, dx).map_err(|e| (limit, e))?;
            if fired_after || f.speed.is_some_and(|after_last| speed < after_last) {
                let f = &mut whens.firings[w][b];
                f.limit = None;
                f.shrinking = 0;
                continue;
            }
            let span = model.program.events().whens[w].span;
            return Err((limit.min(t), zeno_error(&f, span)));
        }
    }
    Ok(())
}
