//! The history behind `delay(expr, d)`: the values of each delayed expression at the accepted
//! points of a run, and the delayed values read from them.
//!
//! Input: the values of the delayed expressions (the program's `delay`s, in its order) at the
//! start, within and at the end of each accepted step, and on both sides of each jump (two
//! values at the same time mark one). Output: for a time `t`, each expression as it was at
//! `t - d` (its value at the start before the start plus `d`), interpolated by the cubic
//! polynomial through the four nearest recorded points on the same side of every jump (fewer
//! where the side has fewer). The caller keeps every step no longer than the shortest delay, so
//! `t - d` never lies beyond the last accepted point, and ends a step at each breaking point
//! `te + d` after a jump at `te`, where the delayed value jumps. Deliberately not here:
//! evaluating the expressions, and delays that change during the run.

/// One delayed expression: the work slot of its value, its delay and its history.
#[derive(Debug, Clone)]
pub struct DelayLine {
    pub slot: u32,
    pub delay: f64,
    times: Vec<f64>,
    values: Vec<f64>,
}

/// The delay lines of a run.
#[derive(Debug, Clone, Default)]
pub struct DelayLines {
    lines: Vec<DelayLine>,
}

/// How many recorded points a line keeps before it drops those older than its delay needs.
const TRIM_AT: usize = 4096;

impl DelayLines {
    /// Lines for `(slot, delay)`, with empty histories.
    pub fn new(lines: impl IntoIterator<Item = (u32, f64)>) -> DelayLines {
        DelayLines {
            lines: lines
                .into_iter()
                .map(|(slot, delay)| DelayLine {
                    slot,
                    delay,
                    times: Vec::new(),
                    values: Vec::new(),
                })
                .collect(),
        }
    }

    pub fn lines(&self) -> &[DelayLine] {
        &self.lines
    }

    /// Whether nothing was recorded yet.
    pub fn is_empty(&self) -> bool {
        self.lines.iter().all(|l| l.times.is_empty())
    }

    /// Writes each line's delayed value at time `t` into its slot of `work` (nothing before
    /// the first record).
    pub fn write(&self, t: f64, work: &mut [f64]) {
        for line in &self.lines {
            if let (Some(value), Some(w)) = (line.value_at(t - line.delay), work.get_mut(line.slot as usize)) {
                *w = value;
            }
        }
    }

    /// Records the lines' values at `t` (in line order); a second record at the same time is
    /// the right side of a jump.
    pub fn record(&mut self, t: f64, values: &[f64]) {
        for (line, &v) in self.lines.iter_mut().zip(values) {
            line.times.push(t);
            line.values.push(v);
            if line.times.len() >= TRIM_AT {
                // Keep what `t - delay` can still reach, with three points before it for the
                // cubic (steps are bounded by the delay, so the next reads are later).
                let keep_from = t - line.delay;
                let first_needed = line.times.partition_point(|&s| s < keep_from).saturating_sub(4);
                line.times.drain(..first_needed);
                line.values.drain(..first_needed);
            }
        }
    }
}

impl DelayLine {
    /// The recorded history at `tau`: its first value before the first record, the cubic
    /// through the nearest points of the same side of any jump otherwise (the right side at a
    /// jump's own time), the last value beyond the last record.
    fn value_at(&self, tau: f64) -> Option<f64> {
        let (times, values) = (&self.times, &self.values);
        let last = times.len().checked_sub(1)?;
        if tau <= times[0] {
            return Some(values[0]);
        }
        if tau >= times[last] {
            return Some(values[last]);
        }
        // times[i] <= tau < times[i + 1]; at a jump's time, i is its right side.
        let i = times.partition_point(|&s| s <= tau) - 1;
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
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(points: &[(f64, f64)]) -> DelayLine {
        DelayLine {
            slot: 0,
            delay: 1.0,
            times: points.iter().map(|p| p.0).collect(),
            values: points.iter().map(|p| p.1).collect(),
        }
    }

    #[test]
    fn a_cubic_is_reproduced_and_jumps_are_not_crossed() {
        let cubic = |t: f64| 1.0 + t - 2.0 * t * t + 0.5 * t * t * t;
        let l = line(&[0.0, 0.3, 0.7, 1.2, 2.0].map(|t| (t, cubic(t))));
        for tau in [0.1, 0.5, 0.9, 1.5, 1.9] {
            assert!((l.value_at(tau).unwrap() - cubic(tau)).abs() < 1e-12, "{tau}");
        }
        assert_eq!(l.value_at(-1.0), Some(1.0));
        // A jump at 1: left of it the constant 0, right of it the constant 5.
        let l = line(&[(0.0, 0.0), (0.5, 0.0), (1.0, 0.0), (1.0, 5.0), (1.5, 5.0), (2.0, 5.0)]);
        for (tau, v) in [(0.2, 0.0), (0.99, 0.0), (1.0, 5.0), (1.01, 5.0), (1.7, 5.0)] {
            assert_eq!(l.value_at(tau), Some(v), "{tau}");
        }
    }
}
