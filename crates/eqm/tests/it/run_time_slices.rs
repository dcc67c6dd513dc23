//! Reductions over values whose number is known only during the run: `max`, `min`, `sum` and
//! `product` of slices whose range changes at events (with a step, downwards, of a matrix's
//! column), reductions whose iterator ranges over such a range (also inside a loop over one),
//! assignments through a vector of run-time subscripts, whole records assigned from values
//! that read them, and the same in functions. Every value is derived by hand from the model's text, and each
//! model runs with both back ends, which must agree bit for bit.

use crate::subscripts::{at, failure, run_both};

/// `n` is 1 until the sample at t = 1, then 2, 3 from t = 2, 4 from t = 3 and 5 from t = 4.
const REDUCTIONS: &str = "
function largest \"max(u[a:b])\"
  input Real u[:];
  input Integer a;
  input Integer b;
  output Real m;
algorithm
  m := max(u[a:b]);
end largest;

function weighted \"u[1] + 2 u[2] + ... + k u[k]\"
  input Real u[:];
  input Integer k;
  output Real s;
algorithm
  s := sum(u[j]*j for j in 1:k);
end weighted;

model Reductions
  parameter Real u[5] = {3, -1, 4, 1, 5};
  parameter Real A[3, 2] = [1, 2; 3, 4; 5, 6];
  discrete Integer n(start = 1);
  Real top = max(u[1:n]);
  Real bottom = min(u[1:n]);
  Real odd = sum(u[1:2:n]);
  Real odd2 = sum(u[1:2:n + 1]);
  Real down = sum(u[n:-2:1]);
  Real column = sum(A[1:min(n, 3), 1]);
  Real rows = product(A[1:min(n, 3), :]);
  Real f = largest(u, 1, n);
  Real g = weighted(u, n);
  Real w = sum(u[j]*j for j in 1:n);
  Real lowest = min(u[j] for j in 1:n);
  Real acc;
  Real tail;
equation
  when sample(1, 1) then
    n = pre(n) + 1;
  end when;
algorithm
  acc := 0;
  for i in 1:n loop
    acc := acc + sum(u[j] for j in 1:i);
  end for;
  tail := max(u[n:end]);
end Reductions;
";

#[test]
fn reductions_of_slices_and_iterators_over_ranges_that_change_at_events() {
    let r = run_both(REDUCTIONS, 4.5);
    let u = [3.0, -1.0, 4.0, 1.0, 5.0];
    let a = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]];
    for (t, n) in [(0.5, 1), (1.5, 2), (2.5, 3), (3.5, 4), (4.5, 5)] {
        assert_eq!(at(&r, "n", t), n as f64);
        let prefix = &u[..n];
        let top = prefix.iter().cloned().fold(f64::MIN, f64::max);
        let bottom = prefix.iter().cloned().fold(f64::MAX, f64::min);
        assert_eq!(at(&r, "top", t), top, "top at {t}");
        assert_eq!(at(&r, "f", t), top, "f at {t}");
        assert_eq!(at(&r, "bottom", t), bottom, "bottom at {t}");
        assert_eq!(at(&r, "lowest", t), bottom, "lowest at {t}");
        // 1:2:n selects 1, 3, 5 up to n; 1:2:n+1 may stop past the array (at 6) without
        // selecting beyond it; n:-2:1 goes down from n.
        let odd: f64 = [3.0, 3.0, 7.0, 7.0, 12.0][n - 1];
        assert_eq!(at(&r, "odd", t), odd, "odd at {t}");
        assert_eq!(at(&r, "odd2", t), [3.0, 7.0, 7.0, 12.0, 12.0][n - 1], "odd2 at {t}");
        assert_eq!(at(&r, "down", t), [3.0, -1.0, 7.0, 0.0, 12.0][n - 1], "down at {t}");
        let m = n.min(3);
        assert_eq!(
            at(&r, "column", t),
            a[..m].iter().map(|r| r[0]).sum::<f64>(),
            "column at {t}"
        );
        let rows: f64 = a[..m].iter().map(|r| r[0] * r[1]).product();
        assert_eq!(at(&r, "rows", t), rows, "rows at {t}");
        // 3, 3 - 2, 3 - 2 + 12, + 4, + 25.
        let w = [3.0, 1.0, 13.0, 17.0, 42.0][n - 1];
        assert_eq!(at(&r, "w", t), w, "w at {t}");
        assert_eq!(at(&r, "g", t), w, "g at {t}");
        // The prefix sums are 3, 2, 6, 7, 12; acc adds the first n of them.
        assert_eq!(at(&r, "acc", t), [3.0, 5.0, 11.0, 18.0, 30.0][n - 1], "acc at {t}");
        let tail = u[n - 1..].iter().cloned().fold(f64::MIN, f64::max);
        assert_eq!(at(&r, "tail", t), tail, "tail at {t}");
    }
}

/// `n` is 1 until the sample at t = 1, then 2, ..., 5 from t = 4: past `u`'s 4 elements.
const BEYOND: &str = "
model Beyond
  parameter Real u[4] = {1, 2, 4, 8};
  discrete Integer n(start = 1);
  Real s = sum(u[j]*j for j in 1:n);
equation
  when sample(1, 1) then
    n = pre(n) + 1;
  end when;
end Beyond;
";

#[test]
fn an_iterator_range_beyond_the_arrays_it_subscripts_stops_the_run() {
    let r = run_both(BEYOND, 3.5);
    assert_eq!(at(&r, "s", 3.5), 1.0 + 4.0 + 12.0 + 32.0);
    for interpreter in [false, true] {
        let (time, d) = failure(BEYOND, 4.5, interpreter);
        assert!((time - 4.0).abs() < 1e-9, "at {time}");
        assert_eq!(d.code, "E0705");
        assert!(
            d.message.contains("the range `1:n` of `j` is 1:5, outside 1..4"),
            "{}",
            d.message
        );
    }
}

/// `n` is 3 until the sample at t = 1, then 2, then 1 from t = 2 and 0 from t = 3.
const EMPTY: &str = "
model Empty
  parameter Real u[4] = {1, 2, 4, 8};
  discrete Integer n(start = 3);
  Real m = max(u[1:2:n]);
equation
  when sample(1, 1) then
    n = pre(n) - 1;
  end when;
end Empty;
";

#[test]
fn max_of_a_slice_that_becomes_empty_stops_the_run() {
    let r = run_both(EMPTY, 2.5);
    for (t, m) in [(0.5, 4.0), (1.5, 1.0), (2.5, 1.0)] {
        assert_eq!(at(&r, "m", t), m, "m at {t}");
    }
    for interpreter in [false, true] {
        let (time, d) = failure(EMPTY, 3.5, interpreter);
        assert!((time - 3.0).abs() < 1e-9, "at {time}");
        assert_eq!(d.code, "E0705");
        assert!(
            d.message
                .contains("the range `1:2:n` of `u[1:2:n]` is 1:2:0, which is empty"),
            "{}",
            d.message
        );
    }
}

/// `i` is 1 until t = 1, then 3; `j` is 2 until t = 2, then 3, equal to `i`.
const VECTOR_ASSIGNMENTS: &str = "
function scatter \"zeros with y[{i, j}] := {a, b}\"
  input Integer i;
  input Integer j;
  input Real a;
  input Real b;
  output Real y[3] = zeros(3);
algorithm
  y[{i, j}] := {a, b};
end scatter;

model VectorAssignments
  Integer i = if time < 1 then 1 else 3;
  Integer j = if time < 2 then 2 else 3;
  Real y[3];
  Real z[3];
  Real B[2, 3];
  Real w[3] = scatter(i, j, 10, 20);
algorithm
  y := zeros(3);
  y[{i, j}] := {10, 20};
  z := {1, 2, 3};
  z[{i, j}] := {z[j], z[i]};
  B := zeros(2, 3);
  B[:, {j, i}] := [1, 2; 3, 4];
end VectorAssignments;
";

#[test]
fn an_assignment_through_a_vector_of_run_time_subscripts_assigns_in_order() {
    let r = run_both(VECTOR_ASSIGNMENTS, 2.5);
    let row = |name: &str, t: f64| [1, 2, 3].map(|k| at(&r, &format!("{name}[{k}]"), t));
    // At t = 2.5 both indices are 3: the last assignment wins.
    for (t, y) in [
        (0.5, [10.0, 20.0, 0.0]),
        (1.5, [0.0, 20.0, 10.0]),
        (2.5, [0.0, 0.0, 20.0]),
    ] {
        assert_eq!(row("y", t), y, "y at {t}");
        assert_eq!(row("w", t), y, "w at {t}");
    }
    // {z[j], z[i]} is held before it is assigned: z[i] and z[j] exchange their values, and
    // with i = j = 3 both assignments give z[3] its own value.
    for (t, z) in [(0.5, [2.0, 1.0, 3.0]), (1.5, [1.0, 3.0, 2.0]), (2.5, [1.0, 2.0, 3.0])] {
        assert_eq!(row("z", t), z, "z at {t}");
    }
    // Column j of B gets {1, 3}, then column i gets {2, 4}.
    let b = |t: f64| [1, 2].map(|r_| [1, 2, 3].map(|c| at(&r, &format!("B[{r_},{c}]"), t)));
    assert_eq!(b(0.5), [[2.0, 1.0, 0.0], [4.0, 3.0, 0.0]]);
    assert_eq!(b(1.5), [[0.0, 1.0, 2.0], [0.0, 3.0, 4.0]]);
    assert_eq!(b(2.5), [[0.0, 0.0, 2.0], [0.0, 0.0, 4.0]]);
}

const RECORD_STEPS: &str = "
record P
  Real x;
  Integer k;
end P;

record Q
  Real a;
  Real b;
end Q;

function advance \"P(x + k, k + 1)\"
  input P p;
  output P q;
algorithm
  q := P(p.x + p.k, p.k + 1);
end advance;

model RecordSteps
  P r;
  Q q;
algorithm
  r := P(time, 1);
  r := advance(r);
  r := advance(r);
  q := Q(time, 2*time);
  q := Q(q.b, q.a);
end RecordSteps;
";

#[test]
fn a_record_assignment_whose_value_reads_the_record_evaluates_it_first() {
    let r = run_both(RECORD_STEPS, 1.0);
    for t in [0.0, 0.5, 1.0] {
        // (t, 1) becomes (t + 1, 2), then (t + 3, 3).
        assert_eq!([at(&r, "r.x", t), at(&r, "r.k", t)], [t + 1.0 + 2.0, 3.0], "r at {t}");
        assert_eq!([at(&r, "q.a", t), at(&r, "q.b", t)], [2.0 * t, t], "q at {t}");
    }
}
