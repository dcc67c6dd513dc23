//! Function variables sized by the values of Integer inputs (`input Integer n; output Real
//! y[n];`), branches of if-statements that such a value excludes, and model arrays sized by a
//! parameter computed by a function. Every value is derived by hand from the model's text, and
//! each model runs with both back ends, which must agree bit for bit.

use crate::subscripts::{at, run_both};

/// `ramp(n, h)` is `{h, 2h, ..., n*h}`, filled by a loop; `table(m)` (m = 3 by default) has
/// the rows `{i, i^2}`; `padded(n)` uses a protected array of `m = n + 1` elements (`m` a
/// protected Integer the body never assigns) and returns their sum, `n + 1` ones; `doubled(a)` repeats `a` in an output of `2*size(a, 1)`.
const SIZED_BY_INPUTS: &str = "
function ramp
  input Integer n;
  input Real h = 1;
  output Real y[n];
algorithm
  for i in 1:n loop
    y[i] := h*i;
  end for;
end ramp;

function table
  input Integer m = 3;
  output Real tab[m, 2];
algorithm
  for i in 1:m loop
    tab[i, 1] := i;
    tab[i, 2] := i*i;
  end for;
end table;

function padded
  input Integer n;
  output Real s;
protected
  Integer m = n + 1;
  Real ones[m];
algorithm
  ones := fill(1, m);
  s := sum(ones);
end padded;

function doubled
  input Real a[:];
  output Real b[2*size(a, 1)];
algorithm
  b := cat(1, a, a);
end doubled;

model SizedByInputs
  parameter Integer k = 4;
  Real z[k] = ramp(k, 0.5)*time;
  Real w[2] = ramp(2)*time;
  Real t[3, 2] = table()*time;
  Real t2[2, 2] = table(2)*time;
  Real p = padded(k)*time;
  Real d[4] = doubled({1, 2})*time;
end SizedByInputs;
";

#[test]
fn outputs_and_locals_sized_by_integer_inputs_take_the_sizes_of_each_call() {
    let r = run_both(SIZED_BY_INPUTS, 1.0);
    for t in [0.25, 0.5, 1.0] {
        for i in 1..=4 {
            assert_eq!(at(&r, &format!("z[{i}]"), t), 0.5 * i as f64 * t);
        }
        assert_eq!([at(&r, "w[1]", t), at(&r, "w[2]", t)], [t, 2.0 * t]);
        for i in 1..=3 {
            assert_eq!(at(&r, &format!("t[{i},1]"), t), i as f64 * t);
            assert_eq!(at(&r, &format!("t[{i},2]"), t), (i * i) as f64 * t);
        }
        assert_eq!([at(&r, "t2[2,1]", t), at(&r, "t2[2,2]", t)], [2.0 * t, 4.0 * t]);
        assert_eq!(at(&r, "p", t), 5.0 * t);
        let d = [
            at(&r, "d[1]", t),
            at(&r, "d[2]", t),
            at(&r, "d[3]", t),
            at(&r, "d[4]", t),
        ];
        assert_eq!(d, [t, 2.0 * t, t, 2.0 * t]);
    }
}

/// `A = x*x'` in a protected matrix of `size(x, 1)` squared, and its trace, which is the sum of
/// the squares of `x`.
const OUTER_PRODUCT_TRACE: &str = "
function outerTrace
  input Real x[:];
  output Real t;
protected
  Real A[size(x, 1), size(x, 1)];
algorithm
  A := matrix(x)*transpose(matrix(x));
  t := 0;
  for i in 1:size(x, 1) loop
    t := t + A[i, i];
  end for;
end outerTrace;

model Trace
  Real tr3 = outerTrace({1, 2, 3}*time);
  Real tr2 = outerTrace({3, 4});
end Trace;
";

#[test]
fn a_local_matrix_sized_by_an_input_holds_the_outer_product() {
    let r = run_both(OUTER_PRODUCT_TRACE, 1.0);
    for t in [0.25, 0.5, 1.0] {
        // (t)^2 + (2t)^2 + (3t)^2 = 14 t^2, each square computed as the product it is.
        let expected = (t * t + (2.0 * t) * (2.0 * t)) + (3.0 * t) * (3.0 * t);
        assert_eq!(at(&r, "tr3", t), expected);
        assert_eq!(at(&r, "tr2", t), 25.0);
    }
}

/// `c` has `mod(order, 2)` elements: with `order = 2` none, so the branch for `order = 1`
/// would index outside it, but it is never taken for that instance and is not elaborated.
const BRANCHES_OF_ONE_ORDER: &str = "
function oddCoefficient
  input Integer order;
  output Real c[mod(order, 2)];
  output Real alpha;
algorithm
  if order == 1 then
    c[1] := 10;
    alpha := 1;
  elseif order == 2 then
    alpha := 2;
  else
    c[1] := 30;
    alpha := 3;
  end if;
end oddCoefficient;

model Orders
  Real c1[1];
  Real a1;
  Real c2[0];
  Real a2;
  Real c3[1];
  Real a3;
equation
  (c1, a1) = oddCoefficient(1);
  (c2, a2) = oddCoefficient(2);
  (c3, a3) = oddCoefficient(3);
end Orders;
";

#[test]
fn branches_that_the_value_of_a_size_input_excludes_are_not_elaborated() {
    let r = run_both(BRANCHES_OF_ONE_ORDER, 1.0);
    assert_eq!([at(&r, "c1[1]", 0.5), at(&r, "a1", 0.5)], [10.0, 1.0]);
    assert_eq!(at(&r, "a2", 0.5), 2.0);
    assert_eq!([at(&r, "c3[1]", 0.5), at(&r, "a3", 0.5)], [30.0, 3.0]);
}

/// `samples(f)` doubles 2 until it reaches `f`: 8 for f = 5, computed when the model is
/// compiled, so that it can size `b`.
const SIZED_BY_A_FUNCTION: &str = "
function samples
  input Real f;
  output Integer n;
algorithm
  n := 2;
  while n < f loop
    n := 2*n;
  end while;
end samples;

model SampledBuffer
  parameter Real fmax = 5;
  parameter Integer ns = samples(fmax);
  Real b[ns];
equation
  for i in 1:ns loop
    b[i] = i*time;
  end for;
end SampledBuffer;
";

#[test]
fn a_model_array_takes_its_size_from_a_function_of_parameters() {
    let r = run_both(SIZED_BY_A_FUNCTION, 1.0);
    assert!(r.column("b[8]").is_some() && r.column("b[9]").is_none());
    for i in 1..=8 {
        assert_eq!(at(&r, &format!("b[{i}]"), 0.5), i as f64 * 0.5);
    }
}

#[test]
fn a_size_input_given_a_value_of_the_run_is_named_in_the_diagnostic() {
    let text = "
function ramp
  input Integer n;
  output Real y[n];
algorithm
  for i in 1:n loop
    y[i] := i;
  end for;
end ramp;

model RunTimeSize
  discrete Integer m(start = 2, fixed = true);
  Real s;
equation
  when time > 0.5 then
    m = 3;
  end when;
  s = sum(ramp(m));
end RunTimeSize;
";
    let mut session = eqm::Session::with_sources(&[("m.eqm".to_string(), text.to_string())], &[], None);
    assert!(session.check(None, &eqm::ModelOptions::default()).is_none());
    let rendered = session.render_diagnostics(false);
    let d = session
        .diagnostics()
        .iter()
        .find(|d| d.code == "E0206")
        .unwrap_or_else(|| panic!("{rendered}"));
    assert!(d.message.contains("argument `n` of `ramp`"), "{rendered}");
}

/// `blocks(n)` fills `3n` rows three at a time through a slice whose bounds follow the loop
/// index; `total(a, p)` adds `10*sum(p)` when `p`, whose default has no elements, is given.
const SLICES_AND_DEFAULTS: &str = "
function blocks
  input Integer n;
  output Real fA[3*n, 2];
algorithm
  for i in 1:n loop
    fA[1 + 3*(i - 1):3*i, :] := [i, 0; i, i*i; i, 0];
  end for;
end blocks;

function total
  input Real a[:];
  input Real p[:] = fill(0.0, 0);
  output Real s;
algorithm
  s := sum(a) + (if size(p, 1) == size(a, 1) then 10*sum(p) else 0);
end total;

model SlicesAndDefaults
  Real b = sum(blocks(2))*time;
  Real s1 = total({1, 2}*time);
  Real s2 = total({1, 2}*time, {1, 1});
end SlicesAndDefaults;
";

#[test]
fn slices_follow_loop_indices_and_open_inputs_take_the_size_of_their_default() {
    let r = run_both(SLICES_AND_DEFAULTS, 1.0);
    for t in [0.25, 0.5, 1.0] {
        // Rows {1, 0}, {1, 1}, {1, 0}, {2, 0}, {2, 4}, {2, 0}: 14 in all.
        assert_eq!(at(&r, "b", t), 14.0 * t);
        assert_eq!(at(&r, "s1", t), t + 2.0 * t);
        assert_eq!(at(&r, "s2", t), (t + 2.0 * t) + 20.0);
    }
}

/// `scaled(r, k)` of a scalar applied to a vector slice and to a matrix: one call per element,
/// the scalar `k` passed to each; `nu` is a protected Integer the body never assigns.
const ELEMENT_BY_ELEMENT: &str = "
function scaled
  input Real r;
  input Real k = 2;
  output Real d;
algorithm
  d := k*r;
end scaled;

function shifted
  input Real u[:];
  output Real y[size(u, 1)];
protected
  Integer nu = size(u, 1);
algorithm
  y := scaled(u[1:nu] - fill(1, nu), 3);
end shifted;

model ElementByElement
  Real y[3] = shifted({1, 2, 3}*time);
  Real m[2, 2] = scaled([1, 2; 3, 4]*time);
end ElementByElement;
";

#[test]
fn a_function_of_scalars_applies_to_each_element_of_array_arguments() {
    let r = run_both(ELEMENT_BY_ELEMENT, 1.0);
    for t in [0.25, 0.5, 1.0] {
        let y = [at(&r, "y[1]", t), at(&r, "y[2]", t), at(&r, "y[3]", t)];
        assert_eq!(y, [3.0 * (t - 1.0), 3.0 * (2.0 * t - 1.0), 3.0 * (3.0 * t - 1.0)]);
        let m = [
            at(&r, "m[1,1]", t),
            at(&r, "m[1,2]", t),
            at(&r, "m[2,1]", t),
            at(&r, "m[2,2]", t),
        ];
        assert_eq!(m, [2.0 * t, 2.0 * (2.0 * t), 2.0 * (3.0 * t), 2.0 * (4.0 * t)]);
    }
}

/// A state-space block with no states, inputs or outputs (`nx = nu = ny = 0`, every matrix
/// empty): its vector equations, `der(x)` of an empty `x` included, are no equations, and the
/// rest of the model runs (z = exp(-t)).
#[test]
fn a_block_whose_arrays_are_all_empty_writes_no_equations() {
    let text = "model Empty\n  parameter Integer nx = 0;\n  parameter Integer nu = 0;\n  \
                parameter Real A[nx, nx] = fill(0, nx, nx);\n  parameter Real B[nx, nu] = fill(0, nx, nu);\n  \
                parameter Real x0[nx] = fill(0, nx);\n  Real x[nx];\n  Real u[nu];\n  \
                Real z(start = 1, fixed = true);\ninitial equation\n  x = x0;\nequation\n  \
                der(x) = A*x + B*u;\n  der(z) = -z;\nend Empty;\n";
    let result = crate::run_both_back_ends(
        text,
        eqm::RunSettings {
            stop: Some(1.0),
            rtol: Some(1e-10),
            atol: Some(1e-10),
            ..Default::default()
        },
    );
    crate::check(&result, "z", 1.0, (-1.0f64).exp(), 1e-8);
}
