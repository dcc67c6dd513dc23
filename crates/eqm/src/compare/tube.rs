//! The tube around a reference signal, as the Modelica Association's csv-compare tool builds it
//! with its rectangle method.
//!
//! Input: the reference's times and values (times non-decreasing, two rows at one time being an
//! event) and the tube's half-widths. Output: the tube's lower and upper bound at any time of
//! the reference's interval, for times asked in non-decreasing order, in amortised constant
//! time each.
//!
//! The tube is the set swept by a rectangle of half-width `time` by `value` centred on every
//! point of the reference's polyline (the straight segments between its rows, vertical at an
//! event). Its upper bound at `t` is therefore the largest value of the polyline over the
//! window `[t - time, t + time]` plus `value`, and its lower bound the smallest minus `value`;
//! csv-compare draws the same boundary as a polyline through the rectangles' corners, removing
//! the loops where two of them cross. The largest and smallest values over a window are those of
//! the rows inside it and of the polyline at the window's two ends, so a sliding window with
//! two monotonic queues gives them without a search. This module does not decide the tube's
//! size (the caller does, from the tolerance) and does not clip the result's times.

use std::collections::VecDeque;

/// The half-widths of a tube: in time and in value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TubeSize {
    pub time: f64,
    pub value: f64,
}

/// The smallest value range a tube is sized by. csv-compare uses it as a nominal value for
/// signals that are (nearly) zero throughout, whose range alone would give a tube of width
/// zero.
pub const NOMINAL_FLOOR: f64 = 1e-3;

impl TubeSize {
    /// The tube of csv-compare for a reference signal and a relative `tolerance`: in time,
    /// `tolerance` times the larger of the time span and the start time's magnitude; in value,
    /// `tolerance` times the largest of the signal's range, its minimum's magnitude and
    /// [`NOMINAL_FLOOR`]. So a constant signal gets a tube of its own magnitude times the
    /// tolerance, and a signal that is zero throughout one of [`NOMINAL_FLOOR`] times it.
    /// `time` and `values` must not be empty.
    pub fn for_reference(time: &[f64], values: &[f64], tolerance: f64) -> TubeSize {
        let (t0, t1) = (time[0], time[time.len() - 1]);
        let span = (t1 - t0).max(t0.abs()).max(1e-12);
        let (low, high) = values.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
            (lo.min(v), hi.max(v))
        });
        let range = (high - low).max(low.abs()).max(NOMINAL_FLOOR);
        TubeSize {
            time: tolerance * span,
            value: tolerance * range,
        }
    }
}

/// The tube's bounds at times asked in non-decreasing order (see the module documentation).
pub struct TubeBounds<'a> {
    time: &'a [f64],
    values: &'a [f64],
    size: TubeSize,
    /// The first row not yet in the window (its time is past the window's right end).
    next: usize,
    /// The first row at or after the window's left end.
    left: usize,
    /// Rows of the window whose values decrease (front: the window's largest).
    maxima: VecDeque<usize>,
    /// Rows of the window whose values increase (front: the window's smallest).
    minima: VecDeque<usize>,
}

impl<'a> TubeBounds<'a> {
    /// The bounds of the tube of `size` around the reference `values` over `time` (of equal,
    /// non-zero length, the times non-decreasing).
    pub fn new(time: &'a [f64], values: &'a [f64], size: TubeSize) -> TubeBounds<'a> {
        debug_assert!(!time.is_empty() && time.len() == values.len());
        TubeBounds {
            time,
            values,
            size,
            next: 0,
            left: 0,
            maxima: VecDeque::new(),
            minima: VecDeque::new(),
        }
    }

    /// The lower and upper bound of the tube at `t`, a time of the reference's interval not
    /// before the time of the previous call.
    pub fn at(&mut self, t: f64) -> (f64, f64) {
        let (start, end) = (t - self.size.time, t + self.size.time);
        let (time, values) = (self.time, self.values);
        while self.next < time.len() && time[self.next] <= end {
            let row = self.next;
            while self.maxima.back().is_some_and(|&i| values[i] <= values[row]) {
                self.maxima.pop_back();
            }
            self.maxima.push_back(row);
            while self.minima.back().is_some_and(|&i| values[i] >= values[row]) {
                self.minima.pop_back();
            }
            self.minima.push_back(row);
            self.next += 1;
        }
        while self.left < time.len() && time[self.left] < start {
            self.left += 1;
        }
        // The queues hold rows in order, so the rows left of the window are a prefix of each.
        while self.maxima.front().is_some_and(|&i| time[i] < start) {
            self.maxima.pop_front();
        }
        while self.minima.front().is_some_and(|&i| time[i] < start) {
            self.minima.pop_front();
        }
        let mut low = self.minima.front().map_or(f64::INFINITY, |&i| values[i]);
        let mut high = self.maxima.front().map_or(f64::NEG_INFINITY, |&i| values[i]);
        // The polyline at the window's ends, where they fall strictly between two rows.
        let ends = [
            (self.left > 0 && self.left < time.len() && time[self.left] > start)
                .then(|| self.interpolate(self.left, start)),
            (self.next > 0 && self.next < time.len() && time[self.next - 1] < end)
                .then(|| self.interpolate(self.next, end)),
        ];
        for v in ends.into_iter().flatten() {
            low = low.min(v);
            high = high.max(v);
        }
        (low - self.size.value, high + self.size.value)
    }

    /// The polyline's value at `t`, strictly between the times of rows `row - 1` and `row`.
    fn interpolate(&self, row: usize, t: f64) -> f64 {
        let (t0, t1) = (self.time[row - 1], self.time[row]);
        let (v0, v1) = (self.values[row - 1], self.values[row]);
        v0 + (v1 - v0) * (t - t0) / (t1 - t0)
    }
}

/// The tube drawn as two polylines over the reference's interval, for a picture: the bounds at
/// every row's time and at the times a window's end meets a row, where the bounds bend.
#[derive(Debug, Clone, PartialEq)]
pub struct TubeOutline {
    pub time: Vec<f64>,
    pub lower: Vec<f64>,
    pub upper: Vec<f64>,
}

impl TubeOutline {
    /// The outline of the tube of `size` around `values` over `time` (non-empty, of equal
    /// length).
    pub fn new(time: &[f64], values: &[f64], size: TubeSize) -> TubeOutline {
        let (first, last) = (time[0], time[time.len() - 1]);
        let mut times: Vec<f64> = time
            .iter()
            .flat_map(|&t| [t - size.time, t, t + size.time])
            .filter(|t| (first..=last).contains(t))
            .collect();
        times.sort_by(f64::total_cmp);
        times.dedup();
        let mut bounds = TubeBounds::new(time, values, size);
        let (lower, upper) = times.iter().map(|&t| bounds.at(t)).unzip();
        TubeOutline {
            time: times,
            lower,
            upper,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bounds by brute force: the polyline's extremes over the window, from every row in it
    /// and the polyline at the window's ends.
    fn brute(time: &[f64], values: &[f64], size: TubeSize, t: f64) -> (f64, f64) {
        let (start, end) = (t - size.time, t + size.time);
        let mut candidates: Vec<f64> = (0..time.len())
            .filter(|&i| time[i] >= start && time[i] <= end)
            .map(|i| values[i])
            .collect();
        for e in [start, end] {
            for i in 1..time.len() {
                if time[i - 1] < e && e < time[i] {
                    candidates.push(
                        values[i - 1] + (values[i] - values[i - 1]) * (e - time[i - 1]) / (time[i] - time[i - 1]),
                    );
                }
            }
        }
        let low = candidates.iter().copied().fold(f64::INFINITY, f64::min);
        let high = candidates.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        (low - size.value, high + size.value)
    }

    #[test]
    fn sliding_window_agrees_with_brute_force_on_a_jagged_signal_with_events() {
        // A deterministic jagged signal with repeated times (events).
        let mut time = Vec::new();
        let mut values = Vec::new();
        let mut state = 12345u64;
        let mut t = 0.0;
        for i in 0..400 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let r = (state >> 33) as f64 / (1u64 << 31) as f64;
            if i % 37 != 5 {
                t += 0.01 + 0.02 * r;
            }
            time.push(t);
            values.push((3.0 * t).sin() + r - 0.5);
        }
        for half_width in [0.0, 0.004, 0.03, 0.5] {
            let size = TubeSize {
                time: half_width,
                value: 0.01,
            };
            let mut bounds = TubeBounds::new(&time, &values, size);
            let last = time[time.len() - 1];
            let mut q = 0.0;
            while q <= last {
                assert_eq!(
                    bounds.at(q),
                    brute(&time, &values, size, q),
                    "at {q}, half-width {half_width}"
                );
                q += 0.0037;
            }
        }
    }

    #[test]
    fn the_size_follows_csv_compare() {
        let time = [0.0, 2.0];
        // The range decides for a signal that changes.
        assert_eq!(
            TubeSize::for_reference(&time, &[-1.0, 3.0], 0.002),
            TubeSize {
                time: 0.004,
                value: 0.008
            }
        );
        // A constant signal is sized by its magnitude, a zero one by the nominal floor.
        assert_eq!(TubeSize::for_reference(&time, &[5.0, 5.0], 0.5).value, 2.5);
        assert_eq!(
            TubeSize::for_reference(&time, &[0.0, 0.0], 0.5).value,
            0.5 * NOMINAL_FLOOR
        );
        // The start time's magnitude decides when it exceeds the span.
        assert_eq!(TubeSize::for_reference(&[10.0, 11.0], &[0.0, 1.0], 0.5).time, 5.0);
    }
}
