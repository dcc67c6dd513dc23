//! The history behind `delay(e, d)` and `delay(e, d, dmax)`: the values of each delayed
//! expression at the accepted points of a run, and the delayed values read from them.
//!
//! Input: the values of the delayed expressions (the program's `delay`s, in its order) at the
//! start, within and at the end of each accepted step, and on both sides of each jump (two
//! values at the same time mark one); for a delay time that changes during the run, its value
//! at the time read. Output: for a time `t`, each expression as it was at `t - d` (its value at
//! the start before the start plus `d`), interpolated by the cubic polynomial through the four
//! nearest recorded points on the same side of every jump (fewer where the side has fewer). At a
//! jump's own time `te`, the delayed value at `te + d` is the left side (its value before the
//! jump) until the run has passed the event there ([`DelayLines::pass`]), and the right side from
//! then on: a delayed jump is a time event at `te + d`, so a relation on a delayed discrete
//! signal changes exactly there.
//! For a fixed delay the caller keeps every step no longer than the delay, so `t - d` never
//! lies beyond the last accepted point, and ends a step at each breaking point `te + d` after a
//! jump at `te`, where the delayed value jumps. A delay time that changes may reach into the
//! step being taken: there the cubic through the last points is extrapolated. A caller that
//! integrates the model itself (Model Exchange, [`DelayLines::extrapolate_fixed_delays`])
//! bounds no step: there fixed delays extrapolate too, and beyond a jump whose event has not
//! passed yet the piece before the jump goes on, so the field stays smooth until the event.
//! Deliberately not here: evaluating the expressions and the delay times.

/// One delayed expression: the work slot of its value, its delay and its history.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DelayLine {
    pub slot: u32,
    /// The delay, or for a delay time that changes the largest delay (how far back the history
    /// must reach).
    pub delay: f64,
    /// The delay time changes during the run (given at each read).
    pub varying: bool,
    times: Vec<f64>,
    values: Vec<f64>,
    /// The times at which the recorded values jump (a second record at one time that differs
    /// from the first), increasing.
    #[serde(default)]
    jumps: Vec<f64>,
}

/// The delay lines of a run.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DelayLines {
    lines: Vec<DelayLine>,
    /// The delay times of the lines whose delay changes, at the last record.
    recorded_varying: Vec<f64>,
    /// The time of the last event at which the delayed jumps were passed (see
    /// [`DelayLines::pass`]).
    passed: f64,
    /// Reads of fixed delays beyond the last record extrapolate it (see
    /// [`DelayLines::extrapolate_fixed_delays`]).
    #[serde(default)]
    extrapolate_fixed: bool,
}

/// A jump this close (relative to the time read) to the time a delayed value is read from lies
/// at that time: jump times reached through different sums of delays differ by a rounding.
pub const JUMP_RESOLUTION: f64 = 1e-10;

/// The shortest step bound a delay time that changes imposes, as a fraction of its largest
/// delay: below it the delay time reaches into the step being taken (extrapolated), instead of
/// steps shrinking without end as the delay time approaches 0.
const VARYING_STEP_FLOOR: f64 = 1e-3;

/// How many recorded points a line keeps before it drops those older than its delay needs.
const TRIM_AT: usize = 4096;

impl DelayLines {
    /// Lines for `(slot, delay, varying)` (the largest delay for a varying one), with empty
    /// histories.
    pub fn new(lines: impl IntoIterator<Item = (u32, f64, bool)>) -> DelayLines {
        DelayLines {
            lines: lines
                .into_iter()
                .map(|(slot, delay, varying)| DelayLine {
                    slot,
                    delay,
                    varying,
                    times: Vec::new(),
                    values: Vec::new(),
                    jumps: Vec::new(),
                })
                .collect(),
            recorded_varying: Vec::new(),
            passed: f64::NEG_INFINITY,
            extrapolate_fixed: false,
        }
    }

    /// Makes reads of fixed delays beyond the last record extrapolate the cubic through the
    /// last points, as reads of delay times that change do. For a caller that integrates the
    /// model itself (Model Exchange): its steps are not bounded by the delays, and the history
    /// holds only the points it reported, so `t - d` may lie beyond the last one.
    pub fn extrapolate_fixed_delays(&mut self) {
        self.extrapolate_fixed = true;
    }

    /// The time of the last record, if there is one.
    pub fn last_record(&self) -> Option<f64> {
        self.lines
            .iter()
            .filter_map(|l| l.times.last().copied())
            .reduce(f64::max)
    }

    /// Marks the event at `t` as the one at which the delayed values that jump at `t` take
    /// their right sides: reads at `t` (within [`JUMP_RESOLUTION`]) give the value after each
    /// jump of a delayed expression at `t - d`, reads at earlier times the value before it.
    pub fn pass(&mut self, t: f64) {
        self.passed = t;
    }

    /// Whether a fixed-delay line's value jumps at `t`: its expression jumped at `t - d`.
    pub fn jumps_at(&self, t: f64) -> bool {
        let tol = JUMP_RESOLUTION * (1.0 + t.abs());
        self.lines
            .iter()
            .filter(|l| !l.varying)
            .any(|l| l.jump_near(t - l.delay, tol).is_some())
    }

    pub fn lines(&self) -> &[DelayLine] {
        &self.lines
    }

    /// Whether nothing was recorded yet.
    pub fn is_empty(&self) -> bool {
        self.lines.iter().all(|l| l.times.is_empty())
    }

    /// Writes each line's delayed value at time `t` into its slot of `work` (nothing before
    /// the first record), with `varying[k]` the delay time of the `k`-th line whose delay
    /// changes.
    pub fn write(&self, t: f64, varying: &[f64], work: &mut [f64]) {
        let tol = JUMP_RESOLUTION * (1.0 + t.abs());
        let passed = (t - self.passed).abs() <= tol;
        let mut varying = varying.iter();
        for line in &self.lines {
            let (delay, extrapolate) = match line.varying {
                true => (varying.next().copied().unwrap_or(line.delay), true),
                false => (line.delay, self.extrapolate_fixed),
            };
            let right_of_jump = match passed {
                true => line.jump_near(t - delay, tol),
                false => None,
            };
            // For a caller that integrates the model, the field stays smooth until the event at
            // a delayed jump passes it: beyond a jump not yet passed, the piece before it goes on.
            let before_jump = match self.extrapolate_fixed && !line.varying {
                true => line
                    .jump_after(self.passed - delay + tol)
                    .filter(|&te| t - delay > te + tol),
                false => None,
            };
            let value = match (right_of_jump, before_jump) {
                (Some(k), _) => Some(line.values[k]),
                (None, Some(te)) => {
                    // The records up to the jump's left side.
                    let left = line.times.partition_point(|&s| s < te);
                    value_in(&line.times[..=left], &line.values[..=left], t - delay, true)
                }
                (None, None) => line.value_at(t - delay, extrapolate),
            };
            if let (Some(value), Some(w)) = (value, work.get_mut(line.slot as usize)) {
                *w = value;
            }
        }
    }

    /// The fixed delays (where a jump reaches a delayed value a known time later).
    pub fn fixed_delays(&self) -> Vec<f64> {
        self.lines.iter().filter(|l| !l.varying).map(|l| l.delay).collect()
    }

    /// The longest step from the last record whose delayed values the history holds: the
    /// shortest fixed delay, and half of each delay time that changes (so that it may shrink
    /// by up to half within the step), but not less than a small part of its largest delay.
    pub fn step_bound(&self) -> Option<f64> {
        let fixed = self.lines.iter().filter(|l| !l.varying).map(|l| l.delay);
        let varying = self
            .lines
            .iter()
            .filter(|l| l.varying)
            .zip(&self.recorded_varying)
            .map(|(l, &d)| (0.5 * d).max(VARYING_STEP_FLOOR * l.delay));
        fixed.chain(varying).filter(|d| *d > 0.0).min_by(f64::total_cmp)
    }

    /// Records the lines' values at `t` (in line order), with the delay times of the lines
    /// whose delay changes there; a second record at the same time is the right side of a jump.
    pub fn record(&mut self, t: f64, values: &[f64], varying: &[f64]) {
        self.recorded_varying = varying.to_vec();
        for (line, &v) in self.lines.iter_mut().zip(values) {
            if line.times.last() == Some(&t) && line.jumps.last() != Some(&t) {
                let first_at_t = line.times.partition_point(|&s| s < t);
                if line.values[first_at_t] != v {
                    line.jumps.push(t);
                }
            }
            line.times.push(t);
            line.values.push(v);
            if line.times.len() >= TRIM_AT {
                // Keep what `t - delay` can still reach, with three points before it for the
                // cubic (steps are bounded by the delay, so the next reads are later; a delay
                // time that changes reaches back at most its largest delay).
                let keep_from = t - line.delay;
                let first_needed = line.times.partition_point(|&s| s < keep_from).saturating_sub(4);
                line.times.drain(..first_needed);
                line.values.drain(..first_needed);
                let first_time = line.times[0];
                line.jumps.retain(|&te| te >= first_time);
            }
        }
    }
}

impl DelayLine {
    /// The index of the right side of a jump recorded within `tol` of `tau`, if there is one:
    /// the last of the records at one time (there may be more than two) when the first differs
    /// from it.
    fn jump_near(&self, tau: f64, tol: f64) -> Option<usize> {
        let times = &self.times;
        let mut k = times.partition_point(|&s| s < tau - tol);
        while k + 1 < times.len() && times[k] <= tau + tol {
            let first = k;
            while k + 1 < times.len() && times[k + 1] == times[first] {
                k += 1;
            }
            if k > first && self.values[k] != self.values[first] {
                return Some(k);
            }
            k += 1;
        }
        None
    }

    /// The time of the first jump recorded after `after`, if there is one (a binary search:
    /// every evaluation of a caller that integrates the model asks).
    fn jump_after(&self, after: f64) -> Option<f64> {
        let k = self.jumps.partition_point(|&te| te <= after);
        self.jumps.get(k).copied()
    }

    /// The recorded history at `tau` (see [`value_in`]).
    fn value_at(&self, tau: f64, extrapolate: bool) -> Option<f64> {
        value_in(&self.times, &self.values, tau, extrapolate)
    }
}

/// The history of records `(times, values)` at `tau`: its first value before the first
/// record, the cubic through the nearest points of the same side of any jump otherwise (the
/// left side at a jump's own time), beyond the last record the last value or (`extrapolate`)
/// the cubic through the last points of the last piece.
fn value_in(times: &[f64], values: &[f64], tau: f64, extrapolate: bool) -> Option<f64> {
    let last = times.len().checked_sub(1)?;
    if tau <= times[0] {
        return Some(values[0]);
    }
    let beyond = tau >= times[last];
    if beyond && !(extrapolate && tau > times[last] && last > 0 && times[last - 1] != times[last]) {
        return Some(values[last]);
    }
    // times[i] < tau <= times[i + 1]; at a jump's time, i + 1 is its left side. Beyond the
    // last record, i is the point before it (the cubic through the last points).
    let i = if beyond {
        last - 1
    } else {
        times.partition_point(|&s| s < tau) - 1
    };
    // The points of the continuous piece around i: from after the previous jump to before
    // the next one.
    let mut lo = i;
    while lo > 0 && times[lo - 1] != times[lo] && i - lo < 3 {
        lo -= 1;
    }
    let mut hi = i + 1;
    while hi < last && times[hi + 1] != times[hi] && hi - i < 3 {
        hi += 1;
    }
    // Up to four points around tau: two on each side where the piece has them.
    let start = lo.max(i.saturating_sub(1));
    let end = hi.min(start + 3).max(i + 1);
    let start = end.saturating_sub(3).max(lo);
    let (ts, vs) = (&times[start..=end], &values[start..=end]);
    // A piece that holds one value (a discrete signal between its jumps) is that value
    // exactly: the interpolation's weights need not add up to 1 to the last bit, and an
    // integer part of the value must not drop below it.
    if vs.iter().all(|&v| v == vs[0]) {
        return Some(vs[0]);
    }
    // Lagrange form: fine for four points.
    let mut sum = 0.0;
    for (j, (&tj, &vj)) in ts.iter().zip(vs).enumerate() {
        let mut weight = 1.0;
        for (m, &tm) in ts.iter().enumerate() {
            if m != j {
                weight *= (tau - tm) / (tj - tm);
            }
        }
        sum += weight * vj;
    }
    Some(sum)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(points: &[(f64, f64)]) -> DelayLine {
        DelayLine {
            slot: 0,
            delay: 1.0,
            varying: false,
            times: points.iter().map(|p| p.0).collect(),
            values: points.iter().map(|p| p.1).collect(),
            jumps: Vec::new(),
        }
    }

    #[test]
    fn a_cubic_is_reproduced_and_jumps_are_not_crossed() {
        let cubic = |t: f64| 1.0 + t - 2.0 * t * t + 0.5 * t * t * t;
        let l = line(&[0.0, 0.3, 0.7, 1.2, 2.0].map(|t| (t, cubic(t))));
        for tau in [0.1, 0.5, 0.9, 1.5, 1.9] {
            assert!((l.value_at(tau, false).unwrap() - cubic(tau)).abs() < 1e-12, "{tau}");
        }
        assert_eq!(l.value_at(-1.0, false), Some(1.0));
        // A jump at 1: left of it the constant 0, right of it the constant 5.
        let l = line(&[(0.0, 0.0), (0.5, 0.0), (1.0, 0.0), (1.0, 5.0), (1.5, 5.0), (2.0, 5.0)]);
        for (tau, v) in [(0.2, 0.0), (0.99, 0.0), (1.0, 0.0), (1.01, 5.0), (1.7, 5.0)] {
            assert_eq!(l.value_at(tau, false), Some(v), "{tau}");
        }
    }

    #[test]
    fn a_delayed_jump_reads_its_right_side_once_its_event_is_passed() {
        // A jump of the expression at 1 (0 to 5), delayed by 1: read at 2, the value before the
        // jump until the event at 2 is passed, then the value after it, also from a time that
        // is 2 up to a rounding.
        let mut lines = DelayLines::new([(0, 1.0, false)]);
        for (t, v) in [
            (0.0, 0.0),
            (0.5, 0.0),
            (1.0, 0.0),
            (1.0, 0.0),
            (1.0, 5.0),
            (1.5, 5.0),
            (2.0, 5.0),
        ] {
            lines.record(t, &[v], &[]);
        }
        let mut work = [f64::NAN];
        assert!(lines.jumps_at(2.0) && lines.jumps_at(2.0 + 4e-16) && !lines.jumps_at(1.9));
        lines.write(2.0, &[], &mut work);
        assert_eq!(work[0], 0.0);
        lines.pass(2.0);
        lines.write(2.0, &[], &mut work);
        assert_eq!(work[0], 5.0);
        lines.write(2.0 - 4e-16, &[], &mut work);
        assert_eq!(work[0], 5.0);
        lines.write(1.9, &[], &mut work);
        assert_eq!(work[0], 0.0);
    }

    #[test]
    fn for_a_caller_that_integrates_a_jump_not_yet_passed_continues_the_piece_before_it() {
        // The expression is t until 1, where it jumps to 5; delayed by 1, read at 2.5: the
        // right side once the event at 2 passed the jump, before that the line before it goes on
        // (2.5 - 1 = 1.5), as the field an importer integrates stays smooth until the event.
        let mut lines = DelayLines::new([(0, 1.0, false)]);
        lines.extrapolate_fixed_delays();
        for (t, v) in [(0.0, 0.0), (0.5, 0.5), (1.0, 1.0), (1.0, 5.0), (1.5, 5.0)] {
            lines.record(t, &[v], &[]);
        }
        let mut work = [f64::NAN];
        lines.write(2.5, &[], &mut work);
        assert!((work[0] - 1.5).abs() < 1e-12, "{}", work[0]);
        lines.pass(2.0);
        lines.write(2.5, &[], &mut work);
        assert_eq!(work[0], 5.0);
        // Beyond the last record (1.5), the last piece is extrapolated: the constant 5.
        lines.write(3.2, &[], &mut work);
        assert_eq!(work[0], 5.0);
    }

    #[test]
    fn beyond_the_last_record_a_varying_delay_extrapolates_the_last_cubic() {
        let cubic = |t: f64| 2.0 - t + 0.25 * t * t * t;
        let l = line(&[0.0, 0.5, 1.0, 1.5, 2.0].map(|t| (t, cubic(t))));
        assert!((l.value_at(2.2, true).unwrap() - cubic(2.2)).abs() < 1e-12);
        assert_eq!(l.value_at(2.2, false), Some(cubic(2.0)));
        // Right after a jump only its right side is known: its value is held.
        let l = line(&[(0.0, 0.0), (1.0, 0.0), (1.0, 5.0)]);
        assert_eq!(l.value_at(1.5, true), Some(5.0));
    }
}
