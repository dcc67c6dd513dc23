//! The profiles behind `spatialDistribution`: for each call, a quantity distributed over the
//! positions 0 to 1, given as points (position, value) with straight lines between them and a
//! jump as two points at the same position, transported by the change of the call's `x`.
//!
//! Input: the initial points, then at each accepted point of the run (and on both sides of
//! each event) the call's `in0`, `in1`, `x` and `positiveVelocity`. Output: at any point, from
//! `x` there, the four values the call's outputs are chosen from (the model's equations choose
//! with `positiveVelocity`): the profile's first and last values, and its values at 0 and at 1
//! after the move since the last record. This is Modelica's definition of the operator: between
//! records the outputs read the recorded profile; at a record the profile moves by the change
//! of `x`, the part pushed out of the interval is dropped (a point at that end keeps the moved
//! profile's value there), and the inflow (`in0` at 0 when `x` grew, `in1` at 1 when it
//! shrank) is a new point at the end the profile moved away from. Beyond that definition, a record where `x` did not change (the other
//! side of an event) keeps a jump of the inflow as a second point at the end
//! `positiveVelocity` names, so that a discontinuity travels through the interval as one.
//! Deliberately not here: evaluating the call's arguments.
//!
//! Each point is kept by its position minus `x` at its record, which does not change while the
//! profile moves: a record adds and drops points at the ends only, in time independent of the
//! number of points kept, and a read is a binary search.

use std::collections::VecDeque;

/// One call's profile.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SpatialProfile {
    /// The work slots of the profile's first value, its last value, its value at 0 and at 1
    /// after the move since the last record.
    pub slots: [u32; 4],
    /// The points' positions minus `x` (before the first record: the initial positions),
    /// non-decreasing.
    marks: VecDeque<f64>,
    values: VecDeque<f64>,
    /// `x` at the last record; `None` before the first.
    x0: Option<f64>,
    /// The time of the last record, and how fast `x` changed between the last two (in units
    /// of `x` per unit of time; `None` before the second record).
    t0: f64,
    rate: Option<f64>,
}

/// The largest part of the interval a profile may move in one step: a read never reaches past
/// the inflow recorded at the step's start, and a transit is sampled at four steps at least.
const MOVE_PER_STEP: f64 = 0.25;

impl SpatialProfile {
    /// A profile of the initial points (positions non-decreasing from 0 to 1 and as many as
    /// the values, checked by the compiler) whose outputs go to `slots`.
    pub fn new(slots: [u32; 4], points: Vec<f64>, values: Vec<f64>) -> SpatialProfile {
        SpatialProfile {
            slots,
            marks: points.into(),
            values: values.into(),
            x0: None,
            t0: f64::NAN,
            rate: None,
        }
    }

    /// The longest step from the last record in which the profile moves by at most
    /// [`MOVE_PER_STEP`] if `x` keeps changing as fast as between the last two records (`None`
    /// before the second record, or while `x` does not change).
    pub fn step_bound(&self) -> Option<f64> {
        self.rate.filter(|r| *r > 0.0).map(|r| MOVE_PER_STEP / r)
    }

    /// The points' positions and values where `x` is `x` (a test's view of the profile).
    pub fn points(&self, x: f64) -> (Vec<f64>, Vec<f64>) {
        let x = if self.x0.is_some() { x } else { 0.0 };
        let positions = self.marks.iter().map(|m| m + x).collect();
        (positions, self.values.iter().copied().collect())
    }

    /// The profile's value at the mark `mark`, by the straight line between the points around
    /// it (the first value before the first point, the last after the last; at a jump's mark
    /// the value after the jump).
    fn value_at(&self, mark: f64) -> f64 {
        let (marks, values) = (&self.marks, &self.values);
        let last = marks.len() - 1;
        if mark.is_nan() || mark <= marks[0] {
            return values[0];
        }
        if mark >= marks[last] {
            return values[last];
        }
        // marks[i] <= mark < marks[i + 1].
        let i = marks.partition_point(|&m| m <= mark) - 1;
        let (m0, m1) = (marks[i], marks[i + 1]);
        let w = (mark - m0) / (m1 - m0);
        values[i] + w * (values[i + 1] - values[i])
    }

    /// The four values where `x` is `x`, into their slots of `work`. Before the first record
    /// the profile has not moved.
    pub fn write(&self, x: f64, work: &mut [f64]) {
        let x = if self.x0.is_some() { x } else { 0.0 };
        let outputs = [
            self.values[0],
            self.values[self.values.len() - 1],
            self.value_at(-x),
            self.value_at(1.0 - x),
        ];
        for (slot, value) in self.slots.iter().zip(outputs) {
            if let Some(w) = work.get_mut(*slot as usize) {
                *w = value;
            }
        }
    }

    /// Records an accepted point (see the module documentation): the profile moved by the
    /// change of `x`, with `in0` entering at 0 (when `x` grew) or `in1` at 1 (when it shrank);
    /// where `x` did not change, a new inflow value at the end `positive` names is a jump there.
    pub fn record(&mut self, t: f64, in0: f64, in1: f64, x: f64, positive: bool) {
        if let Some(x0) = self.x0
            && t > self.t0
        {
            self.rate = Some((x - x0).abs() / (t - self.t0));
        }
        self.t0 = t;
        let Some(x0) = self.x0 else {
            // The initial positions are those where `x` is its first value.
            for m in &mut self.marks {
                *m -= x;
            }
            // Modelica's initial profile is the one given, whatever the inflow at the start:
            // the first move joins the two by a straight line.
            self.x0 = Some(x);
            return;
        };
        if x > x0 {
            let at_end = self.value_at(1.0 - x);
            while self.marks.back().is_some_and(|&m| m >= 1.0 - x) {
                self.marks.pop_back();
                self.values.pop_back();
            }
            self.marks.push_back(1.0 - x);
            self.values.push_back(at_end);
            self.marks.push_front(-x);
            self.values.push_front(in0);
        } else if x < x0 {
            let at_start = self.value_at(-x);
            while self.marks.front().is_some_and(|&m| m <= -x) {
                self.marks.pop_front();
                self.values.pop_front();
            }
            self.marks.push_front(-x);
            self.values.push_front(at_start);
            self.marks.push_back(1.0 - x);
            self.values.push_back(in1);
        } else {
            self.jump(in0, in1, positive);
        }
        self.x0 = Some(x);
    }

    /// Where the profile did not move: the inflow at the end `positive` names, when it differs
    /// from the value there, becomes that end's value, the old one kept beside it at the same
    /// position (one such pair at most: a second jump before the profile moves replaces the
    /// first).
    fn jump(&mut self, in0: f64, in1: f64, positive: bool) {
        let n = self.marks.len();
        if positive && self.values[0] != in0 {
            if n > 1 && self.marks[1] == self.marks[0] {
                self.values[0] = in0;
            } else {
                self.marks.push_front(self.marks[0]);
                self.values.push_front(in0);
            }
        } else if !positive && self.values[n - 1] != in1 {
            if n > 1 && self.marks[n - 2] == self.marks[n - 1] {
                self.values[n - 1] = in1;
            } else {
                self.marks.push_back(self.marks[n - 1]);
                self.values.push_back(in1);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_profile_moves_forward_and_back_and_keeps_jumps() {
        // The line 0 -> 1 over [0, 1], first recorded at x = 2 with in0 = 0 (no jump), moved
        // forward by 0.25 with in0 = 5 entering: the value at 1 is the old one at 0.75, and the
        // first value stays the last recorded inflow until the next record.
        let mut p = SpatialProfile::new([0, 1, 2, 3], vec![0.0, 1.0], vec![0.0, 1.0]);
        let mut work = [0.0; 4];
        p.record(1.0, 0.0, 9.0, 2.0, true);
        p.write(2.25, &mut work);
        assert_eq!(work, [0.0, 1.0, 0.0, 0.75]);
        p.record(2.0, 5.0, 9.0, 2.25, true);
        // x grew by 1/4 in one unit of time: a step may last until it grows by 1/4 again.
        assert_eq!(p.step_bound(), Some(1.0));
        assert_eq!(p.points(2.25), (vec![0.0, 0.25, 1.0], vec![5.0, 0.0, 0.75]));
        // The other side of an event at the same x: in0 jumps to 6, then to 7 (replacing 6).
        p.record(3.0, 6.0, 9.0, 2.25, true);
        assert_eq!(p.points(2.25), (vec![0.0, 0.0, 0.25, 1.0], vec![6.0, 5.0, 0.0, 0.75]));
        p.record(4.0, 7.0, 9.0, 2.25, true);
        assert_eq!(p.points(2.25), (vec![0.0, 0.0, 0.25, 1.0], vec![7.0, 5.0, 0.0, 0.75]));
        // Back by 0.5: the value at 0 is the one at 0.5 before (0 + 0.25/0.75 * 0.75), in1
        // enters at 1 and the points at or below 0 after the move are dropped.
        p.write(1.75, &mut work);
        assert!((work[2] - 0.25).abs() < 1e-15, "{work:?}");
        p.record(5.0, 7.0, 9.0, 1.75, false);
        let (positions, values) = p.points(1.75);
        assert_eq!(positions, vec![0.0, 0.5, 1.0]);
        assert!((values[0] - 0.25).abs() < 1e-15, "{values:?}");
        assert_eq!(&values[1..], &[0.75, 9.0]);
        // A move beyond the whole interval keeps only the two ends: the inflow at 0, and at 1
        // the old profile's value beyond its start.
        p.record(6.0, 3.0, 9.0, 4.0, true);
        assert_eq!(p.points(4.0), (vec![0.0, 1.0], vec![3.0, values[0]]));
    }
}
