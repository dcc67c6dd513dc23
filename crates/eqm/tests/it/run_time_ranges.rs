//! Ranges and subscripts of a model's algorithm computed during the run: for-loops over a range
//! whose bounds change at events, assignments of several elements whose value reads what they
//! assign (`y := {y[2], y[1]}`, `(p, q) := f(p, q)`), vectors of subscripts and slices computed
//! during the run, and start values that read other elements of their array. Every value is derived by hand from the
//! model's text, and each model runs with both back ends, which must agree bit for bit.

use crate::subscripts::{at, failure, run_both};

const SWAPS: &str = "
function exchanged \"(b, a)\"
  input Real a;
  input Real b;
  output Real c;
  output Real d;
algorithm
  c := b;
  d := a;
end exchanged;

model Swaps
  Real y[2];
  Real p;
  Real q;
  Real w[3];
algorithm
  y := {time, 2*time};
  y := {y[2], y[1]};
  p := time;
  q := 2*time;
  (p, q) := exchanged(p, q);
  w := {1, 2, 3}*time;
  w := {w[3], w[1] + w[2], w[1]*w[3]};
end Swaps;
";

#[test]
fn an_assignment_in_a_model_algorithm_evaluates_its_whole_value_first() {
    let r = run_both(SWAPS, 1.0);
    for t in [0.25, 0.5, 1.0] {
        assert_eq!([at(&r, "y[1]", t), at(&r, "y[2]", t)], [2.0 * t, t]);
        assert_eq!([at(&r, "p", t), at(&r, "q", t)], [2.0 * t, t]);
        // {t, 2t, 3t} becomes {3t, t + 2t, t*3t}.
        let w = [at(&r, "w[1]", t), at(&r, "w[2]", t), at(&r, "w[3]", t)];
        assert_eq!(w, [3.0 * t, t + 2.0 * t, t * (3.0 * t)]);
    }
    // The temporaries that hold the values are not results.
    assert!(r.columns().iter().all(|c| !c.name.starts_with('$')));
}

/// `n` is 1 until the sample at t = 1, then 2, 3 from t = 2 and 4 from t = 3.
const LOOPS: &str = "
model Loops
  parameter Real u[4] = {1, 2, 4, 8};
  discrete Integer n(start = 1);
  Real s \"u[1] + ... + u[n]\";
  Real digits \"n, n - 1, ..., 1 as the digits of a number\";
  Real evens \"the sum of the even indices up to n\";
  Real before \"u[1] + ... + u[n - 1]: empty at n = 1\";
  Real firstAbove \"the first k with u[1] + ... + u[k] > 2, by break\";
  Real running;
  Real y[4];
equation
  when sample(1, 1) then
    n = pre(n) + 1;
  end when;
algorithm
  s := 0;
  for i in 1:n loop
    s := s + u[i];
  end for;
  digits := 0;
  for i in n:-1:1 loop
    digits := 10*digits + i;
  end for;
  evens := 0;
  for i in 2:2:n loop
    evens := evens + i;
  end for;
  before := 0;
  for i in 1:n - 1 loop
    before := before + u[i];
  end for;
  firstAbove := 0;
  running := 0;
  for k in 1:n loop
    running := running + u[k];
    if running > 2 then
      firstAbove := k;
      break;
    end if;
  end for;
  y := zeros(4);
  for i in 1:n loop
    y[i] := u[i]*time;
  end for;
end Loops;
";

#[test]
fn a_for_loop_of_a_model_algorithm_runs_over_a_range_that_changes_at_events() {
    let r = run_both(LOOPS, 3.5);
    // (time, n) pairs between the events.
    for (t, n) in [(0.5, 1), (1.5, 2), (2.5, 3), (3.5, 4)] {
        assert_eq!(at(&r, "n", t), n as f64);
        let u = [1.0, 2.0, 4.0, 8.0];
        assert_eq!(at(&r, "s", t), u[..n].iter().sum::<f64>(), "s at {t}");
        assert_eq!(at(&r, "before", t), u[..n - 1].iter().sum::<f64>(), "before at {t}");
        let digits = [1.0, 21.0, 321.0, 4321.0][n - 1];
        assert_eq!(at(&r, "digits", t), digits, "digits at {t}");
        assert_eq!(at(&r, "evens", t), [0.0, 2.0, 2.0, 6.0][n - 1], "evens at {t}");
        // 1, 3, 7, 15: the sum first exceeds 2 at k = 2, when n reaches 2.
        assert_eq!(at(&r, "firstAbove", t), if n >= 2 { 2.0 } else { 0.0 }, "at {t}");
        for i in 1..=4 {
            let expected = if i <= n { u[i - 1] * t } else { 0.0 };
            assert_eq!(at(&r, &format!("y[{i}]"), t), expected, "y[{i}] at {t}");
        }
    }
}

#[test]
fn a_run_time_loop_that_subscripts_past_the_array_stops_the_run() {
    // n reaches 5 at t = 4, and u has 4 elements.
    let text = LOOPS.replace("model Loops", "model Beyond");
    let text = text.replace("end Loops;", "end Beyond;");
    for interpreter in [false, true] {
        let (time, d) = failure(&text, 4.5, interpreter);
        assert!((time - 4.0).abs() < 1e-9, "at {time}");
        assert_eq!(d.code, "E0705");
        assert!(
            d.message.contains("the subscript `i` of `u[i]` is 5, outside 1..4"),
            "{}",
            d.message
        );
    }
}

/// `i` is 1 until t = 1, then 3; `j` is 2 until t = 2, then 4.
const VECTOR_SUBSCRIPTS: &str = "
model VectorSubscripts
  parameter Real u[4] = {1, 2, 4, 8};
  parameter Real A[2, 4] = [1, 2, 3, 4; 5, 6, 7, 8];
  Integer i = if time < 1 then 1 else 3;
  Integer j = if time < 2 then 2 else 4;
  Real w[2];
  Real B[2, 2];
  Real s;
equation
  w = u[{i, j}];
  B = A[:, {j, i}];
algorithm
  s := sum(u[{i, j, 1}]);
end VectorSubscripts;
";

#[test]
fn a_vector_of_subscripts_computed_during_the_run_selects_as_many_elements() {
    let r = run_both(VECTOR_SUBSCRIPTS, 3.0);
    let u = [1.0, 2.0, 4.0, 8.0];
    let a = [[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]];
    for (t, i, j) in [(0.5, 1, 2), (1.5, 3, 2), (2.5, 3, 4)] {
        assert_eq!([at(&r, "w[1]", t), at(&r, "w[2]", t)], [u[i - 1], u[j - 1]], "w at {t}");
        for (row, a_row) in a.iter().enumerate() {
            let b = [
                at(&r, &format!("B[{},1]", row + 1), t),
                at(&r, &format!("B[{},2]", row + 1), t),
            ];
            assert_eq!(b, [a_row[j - 1], a_row[i - 1]], "B at {t}");
        }
        assert_eq!(at(&r, "s", t), u[i - 1] + u[j - 1] + u[0], "s at {t}");
    }
}

/// `n` is 1 until the sample at t = 1, then 2, 3 from t = 2, 4 from t = 3 and 5 from t = 4.
const SLICES: &str = "
function prefix \"u[1] + ... + u[n]\"
  input Real u[:];
  input Integer n;
  output Real s;
algorithm
  s := sum(u[1:n]);
end prefix;

model Slices
  parameter Real u[4] = {1, 2, 4, 8};
  discrete Integer n(start = 1);
  Real s;
  Real p = product(u[n:4]);
  Real f = prefix(u, n);
  Real empty = sum(u[n:n - 1]);
equation
  when sample(1, 1) then
    n = pre(n) + 1;
  end when;
algorithm
  s := sum(u[1:n]);
end Slices;
";

#[test]
fn a_sum_or_product_over_a_slice_computed_during_the_run_is_a_scalar() {
    let r = run_both(SLICES, 3.5);
    let u = [1.0, 2.0, 4.0, 8.0];
    for (t, n) in [(0.5, 1), (1.5, 2), (2.5, 3), (3.5, 4)] {
        let prefix: f64 = u[..n].iter().sum();
        assert_eq!(at(&r, "s", t), prefix, "s at {t}");
        assert_eq!(at(&r, "f", t), prefix, "f at {t}");
        assert_eq!(at(&r, "p", t), u[n - 1..].iter().product::<f64>(), "p at {t}");
        assert_eq!(at(&r, "empty", t), 0.0, "empty at {t}");
    }
}

#[test]
fn a_slice_computed_during_the_run_outside_the_array_stops_the_run() {
    for interpreter in [false, true] {
        let (time, d) = failure(SLICES, 4.5, interpreter);
        assert!((time - 4.0).abs() < 1e-9, "at {time}");
        assert_eq!(d.code, "E0705");
        assert!(
            d.message.contains("the range `1:n` of `u[1:n]` is 1:5, outside 1..4"),
            "{}",
            d.message
        );
    }
}

const ELEMENT_STARTS: &str = "
model ElementStarts
  Real a[3](start = {a[2] + 1, 2, 2*a[1]}, each fixed = true);
equation
  der(a) = {-a[1], 0, 1};
end ElementStarts;
";

#[test]
fn a_start_value_reads_another_element_of_its_array() {
    // a[2] starts at 2, a[1] at a[2] + 1 = 3, a[3] at 2*a[1] = 6.
    let r = run_both(ELEMENT_STARTS, 1.0);
    assert_eq!(
        [at(&r, "a[1]", 0.0), at(&r, "a[2]", 0.0), at(&r, "a[3]", 0.0)],
        [3.0, 2.0, 6.0]
    );
    // a[1] = 3 exp(-t), a[3] = 6 + t.
    assert!((at(&r, "a[1]", 1.0) - 3.0 * (-1.0f64).exp()).abs() < 1e-8);
    assert!((at(&r, "a[3]", 1.0) - 7.0).abs() < 1e-9);
}

#[test]
fn start_values_of_elements_that_read_each_other_in_a_cycle_are_named() {
    let text = "model Cycle
  Real b[2](start = {b[2], b[1]}, each fixed = true);
equation
  der(b) = {0, 0};
end Cycle;";
    let mut session = eqm::Session::with_sources(&[("m.eqm".to_string(), text.to_string())], &[], None);
    let model = session.compile(Some("Cycle"), &eqm::ModelOptions::default());
    assert!(model.is_none(), "compiles");
    let cycle = session.diagnostics().iter().find(|d| d.code == "E0601").expect("E0601");
    assert!(
        cycle
            .message
            .contains("depend on each other in a cycle: `b[1]`, `b[2]`"),
        "{}",
        cycle.message
    );
}
