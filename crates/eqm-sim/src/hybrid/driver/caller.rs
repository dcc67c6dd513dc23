//! A resumable run at points its caller chose: the event at a point the caller integrated to
//! (an FMU importer in Model Exchange, or inputs set between co-simulation steps), and for a
//! caller that integrates the model itself, the steps it accepted and the time events ahead.
//!
//! Input: a [`Run`] and the caller's points `(t, x)`. Output: the event iteration there (with
//! sliding begun where the fields on both sides of a surface push back, and ended where the
//! caller's indicator of its coefficient crossed zero), the delayed expressions' history and
//! the profiles of `spatialDistribution` recorded at the caller's accepted points and on both
//! sides of each event, and the next time event: a sample, a breaking point where a delayed
//! value jumps (a delayed discrete signal), or a record due, which the caller must stop at. It deliberately takes no step: where the
//! caller's integrator goes is the caller's.

use super::{HybridError, HybridModel, HybridOutcome, Resumable, decide_sliding, end_sliding, no_rows};
use crate::hybrid::events::{self, event_iteration};
use std::ops::ControlFlow;

impl Resumable {
    /// The event at `(t, x)`, a point the caller integrated to itself: a sample due by `t`
    /// fired, the event iteration (which takes the relations from the surfaces' values there);
    /// the states it leaves are [`Resumable::event_states`].
    pub fn event_at(
        &mut self,
        model: &mut HybridModel<'_>,
        t: f64,
        x: &[f64],
    ) -> Result<ControlFlow<HybridOutcome>, HybridError> {
        let run = &mut self.run;
        run.x.copy_from_slice(x);
        run.last_probe = None;
        // A caller that integrates the model may come to an event without reporting the step
        // that ends there: the history takes the left side of the event first.
        if run.recording && model.ode.instance.delays_recorded_until().is_some_and(|last| last < t) {
            model.ode.instance.record_delays(t, &run.x, &mut run.dx)?;
        }
        events::capture_left_limits(model, t, &run.x, &mut run.dx)?;
        // A delayed value that jumps here jumps in this event.
        if run.recording && model.ode.instance.delays_jump_at(t) {
            model.ode.instance.pass_delay_jumps(t);
        }
        // Every value before the event, to tell an event that changed nothing (a time event at
        // which the history only takes a record) from one after which it is not smooth.
        let before = run.recording.then(|| model.ode.instance.work().to_vec());
        let sliding_surface = model.sliding.as_ref().map(|s| s.surface);
        let signs_before = model.signs.clone();
        end_sliding_left(model, t, &run.x)?;
        // The event iteration takes each relation from its surface's value here.
        let due = run.clocks.next().is_some_and(|c| events::due_by(c, t));
        let iteration = match due {
            true => run.clocks.fire(model, t, &mut run.x, &mut run.dx, &mut run.whens)?,
            false => event_iteration(model, t, &mut run.x, &mut run.dx, &mut run.whens, false)?,
        };
        if let Some(terminated) = iteration {
            let outcome = run.terminated(model, t, terminated, &mut no_rows)?;
            return Ok(ControlFlow::Break(outcome));
        }
        model.held = None;
        if model.switched(t, &run.x)? {
            return Ok(run.switched(t));
        }
        decide_crossed_sides(model, t, &run.x, &signs_before, sliding_surface)?;
        model.stats.events += 1;
        model.check_assertions(t, &run.x, false)?;
        let unchanged = before.is_some_and(|work| run.x == x && model.ode.instance.work() == work.as_slice());
        match unchanged {
            // The solution is smooth through an event that changed nothing: a second record
            // here would keep the history's interpolation from reaching across.
            true => run.pass_event(model, t)?,
            false => run.record_jump(model, t)?,
        }
        Ok(ControlFlow::Continue(()))
    }

    /// The states at the last event (where `terminate` ended the run, which the stepper's own
    /// state may have passed).
    pub fn event_states(&self) -> &[f64] {
        &self.run.x
    }

    /// After a caller that integrates the model accepted a step ending at `(t, x)`: the delayed
    /// expressions recorded there, and the breaking points the step passed dropped. Those where
    /// a delayed value jumps were time events ([`Resumable::next_time_event_of`]); the others
    /// mark only where the history is less smooth, which the caller's error control sees.
    pub fn completed_step(&mut self, model: &mut HybridModel<'_>, t: f64, x: &[f64]) -> Result<(), HybridError> {
        let run = &mut self.run;
        // A second report of the same point adds nothing (two records at one time would mark a
        // jump).
        if !run.recording || model.ode.instance.delays_recorded_until().is_some_and(|last| last >= t) {
            return Ok(());
        }
        run.x.copy_from_slice(x);
        model.ode.instance.record_delays(t, &run.x, &mut run.dx)?;
        let passed = run.breaking.partition_point(|&(b, _)| b < t);
        run.breaking.drain(..passed);
        Ok(())
    }

    /// The next time event after the event at `t` for a caller that integrates the model: the
    /// next sample, the next breaking point at which a delayed value jumps (the delayed
    /// expression jumped at an event a delay earlier), or the point by which the history must
    /// have a record ([`CALLER_RECORDS_PER_DELAY`]), whichever comes first.
    pub fn next_time_event_of(&self, model: &HybridModel<'_>, t: f64) -> Option<f64> {
        let sample = self.run.clocks.next();
        if !self.run.recording {
            return sample;
        }
        let delayed_jump = self
            .run
            .breaking
            .iter()
            .map(|&(b, _)| b)
            .find(|&b| model.ode.instance.delays_jump_at(b));
        let record = match model.ode.instance.delay_step_bound() {
            Some(bound) => Some(t + bound / CALLER_RECORDS_PER_DELAY),
            // A profile of `spatialDistribution` gives a bound once its `x` moved between two
            // records: until then a record soon measures how fast it moves (without one, a
            // caller that meets no event would report its steps only).
            None if model.ode.instance.has_spatials() => Some(t + (self.run.t_end - t) / CALLER_PROFILE_RECORDS),
            None => None,
        }
        .filter(|&at| at < self.run.t_end);
        [sample, delayed_jump, record].into_iter().flatten().reduce(f64::min)
    }
}

/// Ends the sliding where its coefficient has left (0, 1) (the caller's indicator of the
/// sliding surface crossed zero, see `HybridModel::caller_indicators`), towards that side.
fn end_sliding_left(model: &mut HybridModel<'_>, t: f64, x: &[f64]) -> Result<(), HybridError> {
    if let Some(alpha) = model.sliding_alpha(t, x)?
        && !(alpha > 0.0 && alpha < 1.0)
    {
        end_sliding(model, t, alpha >= 0.5);
    }
    Ok(())
}

/// After an event the caller located without saying which surface crossed: each surface that
/// changed its sign (from `signs_before`) or lies on zero may start sliding, or take the side
/// its field goes to (one found exactly on zero, which the caller would otherwise not see
/// cross).
fn decide_crossed_sides(
    model: &mut HybridModel<'_>,
    t: f64,
    x: &[f64],
    signs_before: &[i8],
    sliding_surface: Option<usize>,
) -> Result<(), HybridError> {
    let changed: Vec<usize> = (0..model.signs.len())
        .filter(|&k| Some(k) != sliding_surface && (model.signs[k] != signs_before[k] || model.signs[k] == 0))
        .collect();
    if model.sliding.is_none() && !changed.is_empty() {
        decide_sliding(model, t, x, signs_before, &changed, true)?;
    }
    Ok(())
}

/// How many records of the history a caller that integrates the model is made to give within
/// the shortest delay at least: its steps end where it chooses (an importer reports the ends of
/// its output intervals), so the history between its reports is interpolated, and beyond the
/// last report extrapolated. Time events this far apart bound both: the cubic through records
/// a sixteenth of the delay apart follows a solution that changes on the scale of the delay to
/// the accuracy of the importer's own integration (the delayed logistic equation within 4e-5).
pub const CALLER_RECORDS_PER_DELAY: f64 = 16.0;

/// Into how many parts a record of a `spatialDistribution` profile that has no step bound yet
/// (its `x` has not moved between two records) divides the rest of a caller's run: the first
/// record after the start, and any after a time when `x` stood still, come this soon.
pub const CALLER_PROFILE_RECORDS: f64 = 500.0;
