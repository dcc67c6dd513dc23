//! Subscripts and ranges that are not literals: sizes of function variables taken from their
//! inputs, loops over ranges that depend on inputs, subscripts computed during the run (in
//! models and in functions, read and assigned), `end`, and enumerations as dimensions and
//! ranges. Every value is derived by hand from the model's text, and each model runs with both
//! back ends, which must agree bit for bit.

use crate::compile;
use eqm::{RunSettings, SimulationResult};

/// The run of `text` to `stop` at tight tolerances with native code and with the interpreter,
/// after checking that the two agree bit for bit in every column.
pub(crate) fn run_both(text: &str, stop: f64) -> SimulationResult {
    let settings = RunSettings {
        stop: Some(stop),
        rtol: Some(1e-10),
        atol: Some(1e-10),
        interval: Some(0.05),
        ..RunSettings::default()
    };
    crate::run_both_back_ends(text, settings)
}

/// The value of `name` in the row at `time` (rows every 0.05).
pub(crate) fn at(result: &SimulationResult, name: &str, time: f64) -> f64 {
    let row = result
        .time()
        .iter()
        .position(|&t| (t - time).abs() < 1e-9)
        .unwrap_or_else(|| panic!("no row at {time}"));
    result.column(name).unwrap_or_else(|| panic!("no column {name}"))[row]
}

/// The failure of a run of `text` to `stop`, with the given back end: its time and diagnostic.
pub(crate) fn failure(text: &str, stop: f64, interpreter: bool) -> (f64, eqm_diag::Diagnostic) {
    let err = compile(text)
        .simulate(&RunSettings {
            stop: Some(stop),
            interpreter,
            ..RunSettings::default()
        })
        .expect_err("the run must stop");
    let eqm::RunError::Failed { time, diagnostic, .. } = err else {
        panic!("{err}")
    };
    (time, *diagnostic.expect("a diagnostic"))
}

const SIZED_FUNCTIONS: &str = "
function matvec \"A*x, by loops over the sizes of the inputs\"
  input Real A[:, :];
  input Real x[size(A, 2)];
  output Real y[size(A, 1)];
protected
  Real s;
algorithm
  for i in 1:size(A, 1) loop
    s := 0;
    for j in 1:size(A, 2) loop
      s := s + A[i, j]*x[j];
    end for;
    y[i] := s;
  end for;
end matvec;

function cumsum \"u[1] + ... + u[n], n an input\"
  input Real u[:];
  input Integer n;
  output Real s;
algorithm
  s := 0;
  for i in 1:n loop
    s := s + u[i];
  end for;
end cumsum;

function horner \"a[1] + a[2]*x + ... + a[n]*x^(n-1)\"
  input Real a[:];
  input Real x;
  output Real y;
protected
  Integer k;
algorithm
  y := a[end];
  k := size(a, 1) - 1;
  while k >= 1 loop
    y := y*x + a[k];
    k := k - 1;
  end while;
end horner;

function squares \"the diagonal of the outer product of x with itself\"
  input Real x[:];
  output Real y[size(x, 1)];
protected
  Real A[size(x, 1), size(x, 1)];
algorithm
  for i in 1:size(x, 1) loop
    for j in 1:size(x, 1) loop
      A[i, j] := x[i]*x[j];
    end for;
  end for;
  for i in 1:size(x, 1) loop
    y[i] := A[i, i];
  end for;
end squares;

model Sized
  parameter Real A[2, 3] = [1, 2, 3; 4, 5, 6];
  Real x[3] = {time, 1, 2};
  Real y[2] = matvec(A, x);
  discrete Integer n(start = 1);
  Real c = cumsum({1, 2, 3, 4}, n);
  Real c4 = cumsum({1, 2, 3, 4}, 4);
  Real h = horner({1, 2, 3}, time);
  Real h5 = horner({1, -1, 0.5, 2, 1}, time);
  Real q[3] = squares(x);
algorithm
  when time > 0.5 then
    n := 3;
  end when;
end Sized;
";

#[test]
fn function_variables_take_their_sizes_from_the_inputs_and_loops_their_bounds() {
    let r = run_both(SIZED_FUNCTIONS, 1.0);
    for t in [0.25, 0.75, 1.0] {
        // A*x with x = {t, 1, 2}: {t + 2 + 6, 4*t + 5 + 12}.
        assert_eq!(at(&r, "y[1]", t), t + 8.0);
        assert_eq!(at(&r, "y[2]", t), 4.0 * t + 17.0);
        // Horner: 1 + 2t + 3t^2, and 1 - t + t^2/2 + 2t^3 + t^4.
        assert!((at(&r, "h", t) - (1.0 + 2.0 * t + 3.0 * t * t)).abs() < 1e-14);
        let h5 = 1.0 - t + 0.5 * t * t + 2.0 * t.powi(3) + t.powi(4);
        assert!((at(&r, "h5", t) - h5).abs() < 1e-14);
        assert_eq!(at(&r, "q[1]", t), t * t);
        assert_eq!(at(&r, "q[3]", t), 4.0);
        assert_eq!(at(&r, "c4", t), 10.0);
    }
    // n is 1 until the event at 0.5, then 3: the loop's bound changes during the run.
    assert_eq!(at(&r, "c", 0.25), 1.0);
    assert_eq!(at(&r, "c", 0.75), 6.0);
}

const TABLE: &str = "
model Table
  parameter Real table[4] = {10, 20, 30, 40};
  discrete Integer k(start = 1);
  Real guarded = if k <= 4 then table[k] else -1;
  Real twice = 2*table[min(k, 4)];
equation
  when sample(0.25, 0.25) then
    k = pre(k) + 1;
  end when;
end Table;
";

#[test]
fn a_discrete_integer_selects_a_table_entry_that_changes_at_events() {
    let r = run_both(TABLE, 1.5);
    // k = 1 on [0, 0.25), 2 on [0.25, 0.5), ... 5 from 1 on, 6 from 1.25 on.
    for (t, k) in [(0.1, 1.0), (0.3, 2.0), (0.6, 3.0), (0.9, 4.0), (1.1, 5.0), (1.4, 6.0)] {
        assert_eq!(at(&r, "k", t), k, "k({t})");
        let entry = 10.0 * k.min(4.0);
        assert_eq!(at(&r, "twice", t), 2.0 * entry, "twice({t})");
        // A subscript out of bounds in a branch that is not taken is no error.
        assert_eq!(
            at(&r, "guarded", t),
            if k <= 4.0 { entry } else { -1.0 },
            "guarded({t})"
        );
    }
}

#[test]
fn a_subscript_out_of_bounds_stops_the_run_with_its_value_size_and_location() {
    let text = TABLE.replace("Real twice = 2*table[min(k, 4)];", "Real twice = 2*table[k];");
    let at_line = text.lines().position(|l| l.contains("2*table[k]")).unwrap();
    for interpreter in [false, true] {
        let (time, d) = failure(&text, 1.5, interpreter);
        assert!((time - 1.0).abs() < 1e-9, "at {time}");
        assert_eq!(d.code, "E0705");
        assert!(
            d.message.contains("the subscript `k` of `table[k]` is 5, outside 1..4"),
            "{}",
            d.message
        );
        let primary = d.labels.iter().find(|l| l.primary).expect("a location");
        let line = text[..primary.span.start as usize].lines().count() - 1;
        assert_eq!(line, at_line, "{}", d.message);
    }
}

const FUNCTION_INDICES: &str = "
function pick \"u[i], i an input\"
  input Real u[:];
  input Integer i;
  output Real y;
algorithm
  y := u[i];
end pick;

function reversed \"u backwards, by indices computed in the loop\"
  input Real u[:];
  output Real y[size(u, 1)];
protected
  Integer j;
algorithm
  j := size(u, 1);
  for i in 1:size(u, 1) loop
    y[j] := u[i];
    j := j - 1;
  end for;
end reversed;

function histogram \"counts of the values of u in 1..m\"
  input Integer u[:];
  input Integer m;
  output Real counts[3];
algorithm
  counts := zeros(3);
  for k in 1:size(u, 1) loop
    counts[u[k]] := counts[u[k]] + 1;
  end for;
end histogram;

model FunctionIndices
  discrete Integer i(start = 1);
  Real u[3] = {1, 2, 3} + fill(time, 3);
  Real p = pick(u, i);
  Real r[3] = reversed(u);
  Real h[3] = histogram({3, 1, 3, 3, 2}, 3);
equation
  when time > 0.5 then
    i = 3;
  end when;
end FunctionIndices;
";

#[test]
fn functions_subscript_with_inputs_and_locals_on_both_sides() {
    let r = run_both(FUNCTION_INDICES, 1.0);
    for t in [0.25, 1.0] {
        let u = [1.0 + t, 2.0 + t, 3.0 + t];
        assert_eq!(at(&r, "p", t), if t < 0.5 { u[0] } else { u[2] });
        assert_eq!(at(&r, "r[1]", t), u[2]);
        assert_eq!(at(&r, "r[2]", t), u[1]);
        assert_eq!(at(&r, "r[3]", t), u[0]);
        assert_eq!(
            [at(&r, "h[1]", t), at(&r, "h[2]", t), at(&r, "h[3]", t)],
            [1.0, 1.0, 3.0]
        );
    }
}

#[test]
fn a_function_subscript_out_of_bounds_stops_the_run() {
    let read = FUNCTION_INDICES.replace("i = 3;", "i = 4;");
    let written = FUNCTION_INDICES.replace("{3, 1, 3, 3, 2}", "{3, 1, 0, 3, 2}");
    for interpreter in [false, true] {
        let (time, d) = failure(&read, 1.0, interpreter);
        assert!((time - 0.5).abs() < 1e-6, "at {time}");
        assert_eq!(d.code, "E0705");
        assert!(
            d.message.contains("the subscript `i` of `u[i]` is 4, outside 1..3"),
            "{}",
            d.message
        );
        let (_, d) = failure(&written, 1.0, interpreter);
        assert_eq!(d.code, "E0705");
        assert!(
            d.message.contains("of `u[k]`") || d.message.contains("of `counts[u[k]]`"),
            "{}",
            d.message
        );
        assert!(d.message.contains("is 0, outside 1..3"), "{}", d.message);
    }
}

const ENDS: &str = "
function triple
  input Real u;
  output Real y[3];
algorithm
  y := {u, 2*u, 3*u};
end triple;

function lastTwo
  input Real u[:];
  output Real y[2];
algorithm
  y := u[end - 1:end];
end lastTwo;

model Ends
  Real x[4] = {1, 2, 3, 4}*time;
  parameter Integer v[2] = {1, 3};
  parameter Real A[3, 3] = [1, 2, 3; 4, 5, 6; 7, 8, 9];
  Real a = x[end];
  Real b = triple(time)[end];
  Real c[2] = x[end - 1:end];
  Real d = x[size(x, 1)];
  Real e = triple(time)[end - 1];
  Real f = sum(x[2:end]);
  Real g = x[end - (end - 2)];
  Real h[2] = x[{end, 1}];
  Real k = A[v[end], end];
  Real l[2] = A[end, 2:end];
  Real m = lastTwo(x)[end];
  Real n = lastTwo(triple(time))[1];
  Real o = (triple(time))[end];
  Real p[2] = (A*A)[2, 2:end];
  Real q = (A*{1, time, 0})[end - 1];
end Ends;
";

#[test]
fn end_is_the_size_of_the_dimension_it_subscripts() {
    let r = run_both(ENDS, 1.0);
    for t in [0.5, 1.0] {
        assert_eq!(at(&r, "a", t), 4.0 * t);
        assert_eq!(at(&r, "b", t), 3.0 * t);
        assert_eq!([at(&r, "c[1]", t), at(&r, "c[2]", t)], [3.0 * t, 4.0 * t]);
        assert_eq!(at(&r, "d", t), 4.0 * t);
        assert_eq!(at(&r, "e", t), 2.0 * t);
        assert_eq!(at(&r, "f", t), 9.0 * t);
        assert_eq!(at(&r, "g", t), 2.0 * t);
        assert_eq!([at(&r, "h[1]", t), at(&r, "h[2]", t)], [4.0 * t, t]);
        // A[v[end], end]: the first `end` is size(v, 1), the second size(A, 2).
        assert_eq!(at(&r, "k", t), 9.0);
        assert_eq!([at(&r, "l[1]", t), at(&r, "l[2]", t)], [8.0, 9.0]);
        assert_eq!(at(&r, "m", t), 4.0 * t);
        assert_eq!(at(&r, "n", t), 2.0 * t);
        // A parenthesized expression subscripted: A*A = [30, 36, 42; 66, 81, 96; 102, 126, 150].
        assert_eq!(at(&r, "o", t), 3.0 * t);
        assert_eq!([at(&r, "p[1]", t), at(&r, "p[2]", t)], [81.0, 96.0]);
        assert_eq!(at(&r, "q", t), 4.0 + 5.0 * t);
    }
}

const ENUMERATIONS: &str = "
type E = enumeration(a, b, c);

function pick
  input Real u[E];
  input E e;
  output Real y;
algorithm
  y := u[e];
end pick;

function total
  input Real u[E];
  output Real s;
algorithm
  s := 0;
  for e in E loop
    s := s + u[e];
  end for;
end total;

function firstTwo
  input Real u[E];
  output Real y[2];
algorithm
  y := u[E.a:E.b];
end firstTwo;

model Enumerations
  Real x[E] = {1, 2, 3}*time;
  Real y = x[E.b];
  Real z[E];
  Real w = sum(x[e] for e in E);
  Real v[2] = x[E.a:E.b];
  Real t = total(x);
  Real f[2] = firstTwo(x);
  Real l = x[end];
  discrete E mode(start = E.a);
  Real selected = x[mode];
  Real picked = pick(x, mode);
equation
  for e in E loop
    z[e] = 2*x[e];
  end for;
  when time > 0.5 then
    mode = E.c;
  end when;
end Enumerations;
";

#[test]
fn enumerations_are_dimensions_subscripts_and_ranges() {
    let r = run_both(ENUMERATIONS, 1.0);
    for t in [0.25, 1.0] {
        assert_eq!(at(&r, "y", t), 2.0 * t);
        assert_eq!(
            [at(&r, "z[1]", t), at(&r, "z[2]", t), at(&r, "z[3]", t)],
            [2.0 * t, 4.0 * t, 6.0 * t]
        );
        assert_eq!(at(&r, "w", t), 6.0 * t);
        assert_eq!(at(&r, "t", t), 6.0 * t);
        assert_eq!([at(&r, "v[1]", t), at(&r, "v[2]", t)], [t, 2.0 * t]);
        assert_eq!([at(&r, "f[1]", t), at(&r, "f[2]", t)], [t, 2.0 * t]);
        assert_eq!(at(&r, "l", t), 3.0 * t);
        // mode is E.a until the event at 0.5, then E.c.
        let chosen = if t < 0.5 { t } else { 3.0 * t };
        assert_eq!(at(&r, "selected", t), chosen);
        assert_eq!(at(&r, "picked", t), chosen);
    }
}

const SIMULTANEOUS: &str = "
function rotated \"a quarter turn of u, then its first element plus one, both in place\"
  input Real u[2];
  output Real y[2];
protected
  Real A[2, 2] = [0, -1; 1, 0];
algorithm
  y := u;
  y := A*y;
  y := {y[1] + 1, y[2]};
end rotated;

function swapped
  input Real u[2];
  output Real y[2];
algorithm
  y := u;
  y := {y[2], y[1]};
end swapped;

model Simultaneous
  Real r[2] = rotated({1, 2}*time);
  Real s[2] = swapped({1, 2}*time);
  Real x[2];
algorithm
  x := {1, 2}*time;
  x := {x[1] + 1, 2*x[2]};
end Simultaneous;
";

#[test]
fn an_array_assignment_evaluates_its_whole_value_first() {
    let r = run_both(SIMULTANEOUS, 1.0);
    for t in [0.5, 1.0] {
        // [0, -1; 1, 0]*{t, 2t} = {-2t, t}.
        assert_eq!([at(&r, "r[1]", t), at(&r, "r[2]", t)], [1.0 - 2.0 * t, t]);
        assert_eq!([at(&r, "s[1]", t), at(&r, "s[2]", t)], [2.0 * t, t]);
        assert_eq!([at(&r, "x[1]", t), at(&r, "x[2]", t)], [t + 1.0, 4.0 * t]);
    }
}

const ROWS: &str = "
function rowSwapped \"A with the two elements of row i swapped\"
  input Real A[:, 2];
  input Integer i;
  output Real B[size(A, 1), 2];
algorithm
  B := A;
  B[i, :] := {B[i, 2], B[i, 1]};
end rowSwapped;

model Rows
  discrete Integer n(start = 1);
  Real B[2, 2] = rowSwapped([1, 2; 3, 4]*time, n);
  Real C[2, 3];
algorithm
  C := zeros(2, 3);
  C[n, 2:3] := {time, 2*time};
  when time > 0.5 then
    n := 2;
  end when;
end Rows;
";

#[test]
fn a_row_selected_during_the_run_is_assigned_as_a_whole() {
    let r = run_both(ROWS, 1.0);
    let row = |name: &str, t: f64, i: usize, m: usize| -> Vec<f64> {
        (1..=m).map(|j| at(&r, &format!("{name}[{i},{j}]"), t)).collect()
    };
    // Row 1 until the event at 0.5, row 2 after it.
    assert_eq!(row("B", 0.25, 1, 2), [0.5, 0.25]);
    assert_eq!(row("B", 0.25, 2, 2), [0.75, 1.0]);
    assert_eq!(row("B", 1.0, 1, 2), [1.0, 2.0]);
    assert_eq!(row("B", 1.0, 2, 2), [4.0, 3.0]);
    assert_eq!(row("C", 0.25, 1, 3), [0.0, 0.25, 0.5]);
    assert_eq!(row("C", 0.25, 2, 3), [0.0, 0.0, 0.0]);
    assert_eq!(row("C", 1.0, 1, 3), [0.0, 0.0, 0.0]);
    assert_eq!(row("C", 1.0, 2, 3), [0.0, 1.0, 2.0]);
}

/// A function whose local array has no elements (as the Modelica Standard Library's filter
/// functions declare `Real cr[0]` for an even order): the whole array is no element at all, so
/// a loop over `1:size(c, 1)` does nothing and the function returns its input plus the sum of
/// the other array, 1 + 2 + 3.
const EMPTY_LOCAL: &str = "
function g
  input Real x;
  output Real y;
protected
  Real c[0];
  Real d[3] = {1, 2, 3};
algorithm
  y := x;
  for i in 1:size(c, 1) loop
    y := y + c[i];
  end for;
  y := y + sum(d) + sum(c);
end g;
model M
  Real z = g(time);
end M;
";

#[test]
fn a_local_array_without_elements_has_no_element_to_read() {
    let r = run_both(EMPTY_LOCAL, 1.0);
    for t in [0.0, 0.5, 1.0] {
        assert_eq!(at(&r, "z", t), t + 6.0);
    }
}
