//! Ranges computed during the run used as values: slices equated with or assigned to a vector
//! (`y = u[n:n + 1]`, `z := u[1:n:1 + n]`, `c := A[m:m + 1, 1]`), assigned through
//! (`w[n:n + 1] := {..}`), and array constructors over them (`{u[j]*j for j in n:n + 1}`),
//! in model equations, model algorithms and functions. Each value is derived by hand from the
//! model's text; each model runs with both back ends, which must agree bit for bit. A range
//! whose number of elements is not that of the vector it meets stops the run with its values.

use crate::subscripts::{at, failure, run_both};

/// `n` is 1 until the sample at t = 1, then 2, then 3 from t = 2.
const SLICE_VALUES: &str = "
function pair \"u[k], u[k + 1]\"
  input Real u[:];
  input Integer k;
  output Real y[2];
algorithm
  y := u[k:k + 1];
end pair;

function weights \"{u[j]*j for j in k:k + 1}\"
  input Real u[:];
  input Integer k;
  output Real y[2];
algorithm
  y := {u[j]*j for j in k:k + 1};
end weights;

model SliceValues
  parameter Real u[5] = {3, -1, 4, 1, 5};
  parameter Real A[3, 2] = [1, 2; 3, 4; 5, 6];
  discrete Integer n(start = 1);
  Real y[2];
  Real p[2] = pair(u, n);
  Real f[2] = weights(u, n);
  Real z[2];
  Real c[2];
  Real g[2];
  Real w[4];
  Real d[2];
  Real b[2] = 2*u[n:n + 1];
equation
  when sample(1, 1) then
    n = pre(n) + 1;
  end when;
  y = time*u[n:n + 1];
  d = u[n + 1:-1:n];
algorithm
  z := u[1:n:1 + n];
  c := A[min(n, 2):min(n, 2) + 1, 1];
  g := {u[j]*j for j in n:n + 1};
  w := zeros(4);
  w[n:n + 1] := {10, 20};
end SliceValues;
";

#[test]
fn slices_and_constructors_over_run_time_ranges_take_the_size_of_what_they_meet() {
    let r = run_both(SLICE_VALUES, 2.5);
    let u = [3.0, -1.0, 4.0, 1.0, 5.0];
    let a1 = [1.0, 3.0, 5.0];
    let pair = |name: &str, t: f64| [at(&r, &format!("{name}[1]"), t), at(&r, &format!("{name}[2]"), t)];
    for (t, n) in [(0.5, 1usize), (1.5, 2), (2.5, 3)] {
        assert_eq!(at(&r, "n", t), n as f64);
        let (k, k1) = (n - 1, n);
        assert_eq!(pair("y", t), [t * u[k], t * u[k1]], "y at {t}");
        assert_eq!(pair("p", t), [u[k], u[k1]], "p at {t}");
        assert_eq!(pair("d", t), [u[k1], u[k]], "d at {t}");
        assert_eq!(pair("b", t), [2.0 * u[k], 2.0 * u[k1]], "b at {t}");
        // 1:n:1 + n is {1, 1 + n} whatever n is.
        assert_eq!(pair("z", t), [u[0], u[n]], "z at {t}");
        let m = n.min(2);
        assert_eq!(pair("c", t), [a1[m - 1], a1[m]], "c at {t}");
        let weighted = [u[k] * n as f64, u[k1] * (n + 1) as f64];
        assert_eq!(pair("g", t), weighted, "g at {t}");
        assert_eq!(pair("f", t), weighted, "f at {t}");
        let mut w = [0.0; 4];
        w[k] = 10.0;
        w[k1] = 20.0;
        let got = [1, 2, 3, 4].map(|i| at(&r, &format!("w[{i}]"), t));
        assert_eq!(got, w, "w at {t}");
    }
}

/// `y` has 2 elements; the range `1:n` has 2 until t = 1, then 3.
const LENGTH_MISMATCH: &str = "
model LengthMismatch
  parameter Real u[4] = {1, 2, 3, 4};
  discrete Integer n(start = 2);
  Real y[2];
equation
  when time > 1 then
    n = 3;
  end when;
  y = u[1:n];
end LengthMismatch;
";

#[test]
fn a_run_time_range_whose_length_differs_from_its_target_stops_the_run_with_its_values() {
    let at_line = LENGTH_MISMATCH.lines().position(|l| l.contains("y = u[1:n]")).unwrap();
    for interpreter in [false, true] {
        let (time, d) = failure(LENGTH_MISMATCH, 2.0, interpreter);
        assert!((time - 1.0).abs() < 1e-6, "at {time}");
        assert_eq!(d.code, "E0705");
        assert!(
            d.message
                .contains("the range `1:n` is 1:3, with 3 elements where `y` has 2 elements"),
            "{}",
            d.message
        );
        let primary = d.labels.iter().find(|l| l.primary).expect("a location");
        let line = LENGTH_MISMATCH[..primary.span.start as usize].lines().count() - 1;
        assert_eq!(line, at_line, "{}", d.message);
    }
}

/// `w[n:n + 2] := {1, 2, 3}` selects beyond `w` once `n` is 3.
const OUTSIDE: &str = "
model Outside
  discrete Integer n(start = 1);
  Real w[4];
equation
  when sample(1, 1) then
    n = pre(n) + 1;
  end when;
algorithm
  w := zeros(4);
  w[n:n + 2] := {1, 2, 3};
end Outside;
";

#[test]
fn a_run_time_range_assigned_outside_its_array_stops_the_run_with_its_value() {
    for interpreter in [false, true] {
        let (time, d) = failure(OUTSIDE, 3.0, interpreter);
        assert!((time - 2.0).abs() < 1e-6, "at {time}");
        assert_eq!(d.code, "E0705");
        assert!(
            d.message
                .contains("the subscript `n:n + 2` of `w[n:n + 2]` is 5, outside 1..4"),
            "{}",
            d.message
        );
    }
}

/// `n` is 1 until the sample at t = 1, then 2, ..., 4 from t = 3.
const MASKED: &str = "
function prefix \"the first n elements of u, the rest 0\"
  input Real u[:];
  input Integer n;
  output Real y[size(u, 1)];
algorithm
  y := zeros(size(u, 1));
  y[1:n] := u[1:n];
end prefix;

model Masked
  parameter Real u[4] = {3, -1, 4, 1};
  discrete Integer n(start = 1);
  Real y[4];
  Real shifted[4];
  Real odd[4];
  Real f[4] = prefix(time*u, n);
equation
  when sample(1, 1) then
    n = pre(n) + 1;
  end when;
algorithm
  y := zeros(4);
  y[1:n] := time*u[1:n];
  shifted := u;
  shifted[2:n] := shifted[1:n - 1];
  odd := zeros(4);
  odd[1:2:n] := u[n:-2:1];
end Masked;
";

#[test]
fn a_slice_assigned_a_slice_both_computed_during_the_run_takes_their_common_length() {
    let r = run_both(MASKED, 3.5);
    let u = [3.0, -1.0, 4.0, 1.0];
    let row = |name: &str, t: f64| [1, 2, 3, 4].map(|k| at(&r, &format!("{name}[{k}]"), t));
    for (t, n) in [(0.5, 1usize), (1.5, 2), (2.5, 3), (3.5, 4)] {
        let mut y = [0.0; 4];
        for (y, u) in y.iter_mut().zip(&u).take(n) {
            *y = t * u;
        }
        assert_eq!(row("y", t), y, "y at {t}");
        assert_eq!(row("f", t), y, "f at {t}");
        // shifted[2:n] := shifted[1:n - 1] moves u[1..n-1] one place up, all held first.
        let mut shifted = u;
        shifted[1..n].copy_from_slice(&u[..n - 1]);
        assert_eq!(row("shifted", t), shifted, "shifted at {t}");
        // 1:2:n and n:-2:1 have the same number of elements: odd[1], odd[3] from u[n], u[n-2].
        let mut odd = [0.0; 4];
        for (p, k) in (0..n).step_by(2).enumerate() {
            odd[k] = u[n - 1 - 2 * p];
        }
        assert_eq!(row("odd", t), odd, "odd at {t}");
    }
}

/// `y[1:n] := u[2:n]` has one element less on the right.
const UNEQUAL: &str = "
model Unequal
  parameter Real u[4] = {1, 2, 3, 4};
  discrete Integer n(start = 2);
  Real y[4];
equation
  when sample(1, 1) then
    n = pre(n) + 1;
  end when;
algorithm
  y := zeros(4);
  y[1:n] := u[2:n + 1];
  y[1:n] := u[2:n];
end Unequal;
";

#[test]
fn slices_of_different_run_time_lengths_stop_the_run_with_both_lengths() {
    for interpreter in [false, true] {
        let (time, d) = failure(UNEQUAL, 1.0, interpreter);
        assert_eq!(time, 0.0);
        assert_eq!(d.code, "E0705");
        assert!(
            d.message
                .contains("the range `2:n` is 2:1:2, with 1 elements where `y[1:n]` has 2"),
            "{}",
            d.message
        );
    }
}

/// `h` halves and `tEnd` grows by 1 at each sample: (0.5, 1), then (0.25, 2), then (0.125, 3).
const REAL_LOOPS: &str = "
function trapezoid \"the integral of r from 0 to T by the trapezoidal rule with step h\"
  input Real h;
  input Real T;
  output Real area;
algorithm
  area := 0;
  for r in h:h:T loop
    area := area + h*((r - h) + r)/2;
  end for;
end trapezoid;

model RealLoops
  discrete Real h(start = 0.5);
  discrete Real tEnd(start = 1);
  Real s;
  Real count;
  Real down;
  Real area = trapezoid(h, tEnd);
equation
  when sample(1, 1) then
    h = pre(h)/2;
    tEnd = pre(tEnd) + 1;
  end when;
algorithm
  s := 0;
  count := 0;
  for r in 0.0:h:tEnd loop
    s := s + r;
    count := count + 1;
  end for;
  down := 0;
  for r in tEnd:-2*h:0.1 loop
    down := down + r;
  end for;
end RealLoops;
";

#[test]
fn a_for_loop_over_a_range_of_reals_computed_during_the_run() {
    let r = run_both(REAL_LOOPS, 2.5);
    for (t, h, t_end) in [(0.5, 0.5, 1.0), (1.5, 0.25, 2.0), (2.5, 0.125, 3.0)] {
        // 0:h:tEnd has tEnd/h + 1 values k*h, whose sum is h*(0 + 1 + ... + m).
        let m = t_end / h;
        assert_eq!(at(&r, "count", t), m + 1.0, "count at {t}");
        assert_eq!(at(&r, "s", t), h * m * (m + 1.0) / 2.0, "s at {t}");
        // tEnd:-2h:0.1 has floor((tEnd - 0.1)/(2h)) + 1 values: {1}, {2, 1.5, 1, 0.5}, and
        // the 12 values 3 - k/4.
        assert_eq!(at(&r, "down", t), [1.0, 5.0, 19.5][(t as usize).min(2)], "down at {t}");
        // The trapezoidal rule is exact for a line: T^2/2.
        assert_eq!(at(&r, "area", t), t_end * t_end / 2.0, "area at {t}");
    }
}

/// `k` is 1 until the sample at t = 1, then 2, ..., 4 from t = 3.
const ITERATOR_LOOPS: &str = "
function triangle \"1 + 2 + ... + k\"
  input Integer k;
  output Integer s;
algorithm
  s := sum(j for j in 1:k);
end triangle;

model IteratorLoops
  discrete Integer k(start = 1);
  Real tri = sum(j for j in 1:k);
  Real squares = sum(j^2 for j in 1:k);
  Real factorial = product(j for j in 1:k);
  Real fromFunction = triangle(k);
  Real powers = sum(time^j for j in 0:k);
  Real lowest = min((j - 3)^2 + time for j in 1:k);
  Real highest = max(-j for j in 1:k);
  Real downwards = sum(j for j in k:-1:2);
equation
  when sample(1, 1) then
    k = pre(k) + 1;
  end when;
end IteratorLoops;
";

#[test]
fn reductions_over_run_time_ranges_that_subscript_no_array_loop_over_them() {
    let r = run_both(ITERATOR_LOOPS, 3.5);
    for (t, k) in [(0.5, 1i64), (1.5, 2), (2.5, 3), (3.5, 4)] {
        let kf = k as f64;
        assert_eq!(at(&r, "tri", t), kf * (kf + 1.0) / 2.0, "tri at {t}");
        assert_eq!(at(&r, "fromFunction", t), kf * (kf + 1.0) / 2.0, "fromFunction at {t}");
        assert_eq!(
            at(&r, "squares", t),
            kf * (kf + 1.0) * (2.0 * kf + 1.0) / 6.0,
            "squares at {t}"
        );
        assert_eq!(
            at(&r, "factorial", t),
            (1..=k).product::<i64>() as f64,
            "factorial at {t}"
        );
        // 1 + t + ... + t^k = (t^(k+1) - 1)/(t - 1).
        let geometric = (t.powi(k as i32 + 1) - 1.0) / (t - 1.0);
        assert!(
            (at(&r, "powers", t) - geometric).abs() < 1e-12 * geometric.abs().max(1.0),
            "powers at {t}"
        );
        // (j - 3)^2 is smallest at j = min(k, 3).
        let nearest = (k.min(3) - 3) as f64;
        assert_eq!(at(&r, "lowest", t), nearest * nearest + t, "lowest at {t}");
        assert_eq!(at(&r, "highest", t), -1.0, "highest at {t}");
        // k + (k - 1) + ... + 2, empty (0) for k = 1.
        assert_eq!(at(&r, "downwards", t), kf * (kf + 1.0) / 2.0 - 1.0, "downwards at {t}");
    }
}

/// `max(j for j in 1:k)` with `k` 0 has no value.
const EMPTY_MAX: &str = "
model EmptyMax
  discrete Integer k(start = 1);
  Real m = max(j*time for j in 1:k);
equation
  when time > 0.5 then
    k = 0;
  end when;
end EmptyMax;
";

#[test]
fn max_over_an_empty_run_time_range_stops_the_run_with_its_bounds() {
    for interpreter in [false, true] {
        let (time, d) = failure(EMPTY_MAX, 1.0, interpreter);
        assert!((time - 0.5).abs() < 1e-6, "at {time}");
        assert_eq!(d.code, "E0705");
        assert!(
            d.message
                .contains("the range `1:k` of `j` is 1:0, which is empty: its `min` or `max` has no value"),
            "{}",
            d.message
        );
    }
}

/// `k` is 1 until the sample at t = 1, then 2, then 3 from t = 2.
const RUN_TIME_STEPS: &str = "
model RunTimeSteps
  parameter Real u[6] = {3, -1, 4, 1, 5, 9};
  discrete Integer k(start = 1);
  Real every = sum(u[1:k:6]);
  Real lowest = min(u[6:-k:1]);
  Real weighted = sum(u[j]*j for j in 1:k:6);
  Real count = sum(1 for j in 1:k:6);
  Real pair[2];
equation
  when sample(1, 1) then
    k = pre(k) + 1;
  end when;
algorithm
  pair := u[2:k:2 + k];
end RunTimeSteps;
";

#[test]
fn slices_and_reductions_with_a_step_computed_during_the_run() {
    let r = run_both(RUN_TIME_STEPS, 2.5);
    let u = [3.0, -1.0, 4.0, 1.0, 5.0, 9.0];
    for (t, k) in [(0.5, 1usize), (1.5, 2), (2.5, 3)] {
        let selected: Vec<usize> = (1..=6).step_by(k).collect();
        let every: f64 = selected.iter().map(|&j| u[j - 1]).sum();
        assert_eq!(at(&r, "every", t), every, "every at {t}");
        let down: Vec<usize> = (1..=6).rev().step_by(k).collect();
        let lowest = down.iter().map(|&j| u[j - 1]).fold(f64::MAX, f64::min);
        assert_eq!(at(&r, "lowest", t), lowest, "lowest at {t}");
        let weighted: f64 = selected.iter().map(|&j| u[j - 1] * j as f64).sum();
        assert_eq!(at(&r, "weighted", t), weighted, "weighted at {t}");
        assert_eq!(at(&r, "count", t), selected.len() as f64, "count at {t}");
        assert_eq!(
            [at(&r, "pair[1]", t), at(&r, "pair[2]", t)],
            [u[1], u[1 + k]],
            "pair at {t}"
        );
    }
}

/// The step `k` of `u[1:k:4]` becomes 0 at t = 0.5.
const ZERO_STEP: &str = "
model ZeroStep
  parameter Real u[4] = {1, 2, 3, 4};
  discrete Integer k(start = 1);
  Real s = sum(u[1:k:4]);
equation
  when time > 0.5 then
    k = 0;
  end when;
end ZeroStep;
";

#[test]
fn a_step_computed_during_the_run_that_is_zero_stops_the_run() {
    for interpreter in [false, true] {
        let (time, d) = failure(ZERO_STEP, 1.0, interpreter);
        assert!((time - 0.5).abs() < 1e-6, "at {time}");
        assert_eq!(d.code, "E0705");
        assert!(
            d.message
                .contains("the range `1:k:4` of `u[1:k:4]` is 1:0:4, whose step is 0"),
            "{}",
            d.message
        );
    }
}

/// `n` is 1 until the sample at t = 1, then 2, then 3 from t = 2.
const MORE_FORMS: &str = "
function pair \"u[k], u[k + 1], as the output's binding\"
  input Real u[:];
  input Integer k;
  output Real y[2] = u[k:k + 1];
end pair;

model MoreForms
  parameter Real u[5] = {3, -1, 4, 1, 5};
  discrete Integer n(start = 1);
  Real a[2];
  Real p[2] = pair(u, n);
  Real one[1];
  discrete Real w[2];
equation
  when sample(1, 1) then
    n = pre(n) + 1;
    w = u[n:n + 1];
  end when;
  one = u[n:n];
algorithm
  a := array(u[j] for j in n:n + 1);
end MoreForms;
";

#[test]
fn run_time_slices_in_bindings_of_function_outputs_when_clauses_and_array_constructors() {
    let r = run_both(MORE_FORMS, 2.5);
    let u = [3.0, -1.0, 4.0, 1.0, 5.0];
    let pair = |name: &str, t: f64| [at(&r, &format!("{name}[1]"), t), at(&r, &format!("{name}[2]"), t)];
    for (t, n) in [(0.5, 1usize), (1.5, 2), (2.5, 3)] {
        assert_eq!(pair("a", t), [u[n - 1], u[n]], "a at {t}");
        assert_eq!(pair("p", t), [u[n - 1], u[n]], "p at {t}");
        assert_eq!(at(&r, "one[1]", t), u[n - 1], "one at {t}");
        // The when-clause first fires at t = 1; w starts at 0.
        let w = if n == 1 { [0.0, 0.0] } else { [u[n - 1], u[n]] };
        assert_eq!(pair("w", t), w, "w at {t}");
    }
}

/// `n` is 1 until the sample at t = 1, then 2, then 3 from t = 2.
const SEVERAL_ITERATORS: &str = "
function corner \"the sum of the top-left n x n block of A\"
  input Real A[:, :];
  input Integer n;
  output Real s;
algorithm
  s := sum(A[i, j] for i in 1:n, j in 1:n);
end corner;

model SeveralIterators
  parameter Real A[3, 3] = [1, 2, 3; 4, 5, 6; 7, 8, 9];
  discrete Integer n(start = 1);
  Real corners = sum(A[i, j] for i in 1:n, j in 1:n);
  Real fromFunction = corner(A, n);
  Real shifted = sum(A[j + 1, 1]*j for j in 1:n - 1);
  Real biggest = max(A[i, j]*time for i in 1:n, j in 1:2);
equation
  when sample(1, 1) then
    n = pre(n) + 1;
  end when;
end SeveralIterators;
";

#[test]
fn reductions_with_several_iterators_over_run_time_ranges() {
    let r = run_both(SEVERAL_ITERATORS, 2.5);
    let a = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]];
    for (t, n) in [(0.5, 1usize), (1.5, 2), (2.5, 3)] {
        let block: f64 = a[..n].iter().map(|row| row[..n].iter().sum::<f64>()).sum();
        assert_eq!(at(&r, "corners", t), block, "corners at {t}");
        assert_eq!(at(&r, "fromFunction", t), block, "fromFunction at {t}");
        let shifted: f64 = (1..n).map(|j| a[j][0] * j as f64).sum();
        assert_eq!(at(&r, "shifted", t), shifted, "shifted at {t}");
        let biggest = a[..n].iter().map(|row| row[1].max(row[0])).fold(f64::MIN, f64::max);
        assert_eq!(at(&r, "biggest", t), biggest * t, "biggest at {t}");
    }
}

/// In a function, `y := u[1:k]` with `y` of size 2 and `k` 3 from t = 0.5.
const FUNCTION_MISMATCH: &str = "
function firstTwo
  input Real u[:];
  input Integer k;
  output Real y[2];
algorithm
  y := u[1:k];
end firstTwo;

model FunctionMismatch
  discrete Integer k(start = 2);
  Real y[2] = firstTwo({1, 2, 3}, k);
equation
  when time > 0.5 then
    k = 3;
  end when;
end FunctionMismatch;
";

/// The step `h` of a loop over Reals becomes 0 at t = 0.5.
const REAL_ZERO_STEP: &str = "
model RealZeroStep
  discrete Real h(start = 0.25);
  Real s;
equation
  when time > 0.5 then
    h = 0;
  end when;
algorithm
  s := 0;
  for r in 0:h:1 loop
    s := s + r;
  end for;
end RealZeroStep;
";

#[test]
fn a_mismatch_in_a_function_and_a_real_loop_of_step_zero_stop_the_run() {
    for interpreter in [false, true] {
        let (time, d) = failure(FUNCTION_MISMATCH, 1.0, interpreter);
        assert!((time - 0.5).abs() < 1e-6, "at {time}");
        assert_eq!(d.code, "E0705");
        assert!(
            d.message
                .contains("the range `1:k` is 1:3, with 3 elements where `y` has 2 elements"),
            "{}",
            d.message
        );
        let (time, d) = failure(REAL_ZERO_STEP, 1.0, interpreter);
        assert!((time - 0.5).abs() < 1e-6, "at {time}");
        assert_eq!(d.code, "E0705");
        assert!(
            d.message.contains("the step of the range of this for-loop is 0"),
            "{}",
            d.message
        );
    }
}

/// `n` is 1 until the sample at t = 1, then 2, ..., 4 from t = 3.
const EXPRESSION_REDUCTIONS: &str = "
function dot \"u[1]*w[1] + ... + u[n]*w[n]\"
  input Real u[:];
  input Real w[:];
  input Integer n;
  output Real s = sum(u[1:n] .* w[1:n]);
end dot;

model ExpressionReductions
  parameter Real u[4] = {3, -1, 4, 1};
  parameter Real w[5] = {2, 7, 1, 8, 2};
  discrete Integer n(start = 1);
  Real d = sum(u[1:n] .* w[2:n + 1]);
  Real f = dot(u, w, n);
  Real top = max(time*u[1:n] - w[1:n]);
  Real p = product(u[n:-1:1] + 1);
equation
  when sample(1, 1) then
    n = pre(n) + 1;
  end when;
end ExpressionReductions;
";

#[test]
fn reductions_of_expressions_of_run_time_slices() {
    let r = run_both(EXPRESSION_REDUCTIONS, 3.5);
    let u = [3.0, -1.0, 4.0, 1.0];
    let w = [2.0, 7.0, 1.0, 8.0, 2.0];
    for (t, n) in [(0.5, 1usize), (1.5, 2), (2.5, 3), (3.5, 4)] {
        let d: f64 = (0..n).map(|k| u[k] * w[k + 1]).sum();
        assert_eq!(at(&r, "d", t), d, "d at {t}");
        let f: f64 = (0..n).map(|k| u[k] * w[k]).sum();
        assert_eq!(at(&r, "f", t), f, "f at {t}");
        let top = (0..n).map(|k| t * u[k] - w[k]).fold(f64::MIN, f64::max);
        assert_eq!(at(&r, "top", t), top, "top at {t}");
        let p: f64 = (0..n).map(|k| u[k] + 1.0).product();
        assert_eq!(at(&r, "p", t), p, "p at {t}");
    }
}

/// `u[1:n] .* w[2:n]` has one element less on the right.
const EXPRESSION_MISMATCH: &str = "
model ExpressionMismatch
  parameter Real u[4] = {1, 2, 3, 4};
  parameter Real w[4] = {1, 2, 3, 4};
  discrete Integer n(start = 1);
  Real d = sum(u[1:n] .* w[2:n]);
equation
  when sample(1, 1) then
    n = pre(n) + 1;
  end when;
end ExpressionMismatch;
";

#[test]
fn a_reduction_of_slices_of_different_run_time_lengths_stops_the_run() {
    for interpreter in [false, true] {
        let (time, d) = failure(EXPRESSION_MISMATCH, 1.0, interpreter);
        assert_eq!(time, 0.0);
        assert_eq!(d.code, "E0705");
        assert!(
            d.message
                .contains("the range `2:n` is 2:1:1, with 0 elements where `1:n` has 1"),
            "{}",
            d.message
        );
    }
}
