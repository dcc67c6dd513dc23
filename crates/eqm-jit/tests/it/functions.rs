//! Algorithm statements and user functions, written in `.eqm`, flattened and compiled: loops
//! over run-time ranges, `while` with `break`, branches, early returns, several outputs and
//! recursion, against the same computations written in Rust.

use super::*;
use eqm_ir::expr::Node;

/// Compiles the explicit equations `name = expression` of `flat` as one segment, the variables
/// in `params` read from `p` in that order and every other one written to `work` in the order
/// of `outputs`.
fn compile_equations(flat: &FlatModel, params: &[&str], outputs: &[&str]) -> CompiledModule {
    let slot = |v: VarId| {
        let name = &flat.variables[v.0 as usize].name;
        let param = params.iter().position(|p| p == name).map(|k| Slot::Param(k as u32));
        param.or_else(|| outputs.iter().position(|o| o == name).map(|k| Slot::Work(k as u32)))
    };
    let assignments = flat
        .equations
        .iter()
        .filter_map(|eq| match flat.exprs.get(eq.lhs) {
            Node::Var(v) => Some((slot(*v).expect("a slot"), eq.rhs)),
            _ => None,
        })
        .collect();
    compile(
        &flat.exprs,
        &flat.functions,
        &flat.externals,
        &slot,
        &[Segment::assignments(assignments)],
        &JitOptions::default(),
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

const COLLATZ: &str = r#"
function collatz "the steps of the Collatz sequence from n to 1, at most limit"
  input Integer n;
  input Integer limit;
  output Integer steps = 0;
  output Integer largest;
protected
  Integer k;
algorithm
  k := n;
  largest := n;
  while k <> 1 loop
    if steps >= limit then
      break;
    end if;
    if mod(k, 2) == 0 then
      k := div(k, 2);
    else
      k := 3*k + 1;
    end if;
    largest := max(largest, k);
    steps := steps + 1;
  end while;
end collatz;

model M
  parameter Integer n = 27;
  parameter Integer limit = 1000;
  Integer steps;
  Integer largest;
equation
  (steps, largest) = collatz(n, limit);
end M;
"#;

/// `collatz` in Rust.
fn collatz(n: i64, limit: i64) -> (f64, f64) {
    let (mut k, mut steps, mut largest) = (n, 0, n);
    while k != 1 && steps < limit {
        k = if k % 2 == 0 { k / 2 } else { 3 * k + 1 };
        largest = largest.max(k);
        steps += 1;
    }
    (steps as f64, largest as f64)
}

#[test]
fn a_while_loop_with_break_and_two_outputs() {
    let flat = flatten(COLLATZ);
    let module = compile_equations(&flat, &["n", "limit"], &["steps", "largest"]);
    for (n, limit) in [(27, 1000), (27, 10), (1, 5), (6, 100), (97, 1000)] {
        let mut work = [f64::NAN; 2];
        module
            .call(0, 0.0, &[], &[n as f64, limit as f64], &mut [], &mut work)
            .expect("runs");
        let (steps, largest) = collatz(n, limit);
        assert_eq!(work, [steps, largest], "collatz({n}, {limit})");
    }
}

const SERIES: &str = r#"
function series "the partial sums of exp(x) up to n terms, and the first term below tol"
  input Real x;
  input Integer n;
  input Real tol;
  output Real sum = 0;
  output Integer small = -1;
protected
  Real term = 1;
algorithm
  for i in 1:n loop
    sum := sum + term;
    if abs(term) < tol and small < 0 then
      small := i;
    end if;
    term := term*x/i;
  end for;
end series;

function gcd "the greatest common divisor of whole numbers, recursively"
  input Real a;
  input Real b;
  output Real d;
algorithm
  if b == 0 then
    d := a;
    return;
  end if;
  d := gcd(b, mod(a, b));
end gcd;

model M
  parameter Real x = 1;
  parameter Integer n = 20;
  parameter Real tol = 1e-6;
  parameter Integer a = 1071;
  parameter Integer b = 462;
  Real sum;
  Integer small;
  Real d;
equation
  (sum, small) = series(x, n, tol);
  d = gcd(a, b);
end M;
"#;

/// `series` in Rust, with the same order of operations.
fn series(x: f64, n: i64, tol: f64) -> (f64, f64) {
    let (mut sum, mut small, mut term) = (0.0, -1.0, 1.0_f64);
    for i in 1..=n {
        sum += term;
        if term.abs() < tol && small < 0.0 {
            small = i as f64;
        }
        term = term * x / i as f64;
    }
    (sum, small)
}

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 { a } else { gcd(b, a.rem_euclid(b)) }
}

#[test]
fn for_loops_over_run_time_ranges_early_returns_and_recursion() {
    let flat = flatten(SERIES);
    let module = compile_equations(&flat, &["x", "n", "tol", "a", "b"], &["sum", "small", "d"]);
    for (x, n, tol, a, b) in [
        (1.0, 20, 1e-6, 1071, 462),
        (-2.5, 30, 1e-3, 17, 5),
        (0.5, 0, 1.0, 12, 0),
    ] {
        let mut work = [f64::NAN; 3];
        let p = [x, n as f64, tol, a as f64, b as f64];
        module.call(0, 0.0, &[], &p, &mut [], &mut work).expect("runs");
        let (sum, small) = series(x, n, tol);
        assert_eq!(
            work,
            [sum, small, gcd(a, b) as f64],
            "series({x}, {n}, {tol}), gcd({a}, {b})"
        );
    }
}

#[test]
fn algorithm_statements_of_a_model_assign_their_slots_in_order() {
    let flat = flatten(
        r#"
model M
  parameter Real a = 3;
  parameter Integer n = 4;
  Real y;
  Real z;
algorithm
  y := 0;
  for i in 1:4 loop
    y := y + i*a;
  end for;
  if y > 20 then
    z := y - 20;
  elseif y > 10 then
    z := 2*y;
  else
    z := -y;
  end if;
end M;
"#,
    );
    let names = ["a", "n", "y", "z"];
    let slot = |v: VarId| {
        let name = &flat.variables[v.0 as usize].name;
        match names.iter().position(|n| n == name)? {
            k @ (0 | 1) => Some(Slot::Param(k as u32)),
            k => Some(Slot::Work(k as u32 - 2)),
        }
    };
    let segment = Segment {
        statements: flat.algorithms[0].statements.clone(),
        ..Segment::default()
    };
    let module = compile(
        &flat.exprs,
        &flat.functions,
        &flat.externals,
        &slot,
        &[segment],
        &JitOptions::default(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    for a in [3.0, 1.0, -1.0] {
        let mut work = [f64::NAN; 2];
        module.call(0, 0.0, &[], &[a, 4.0], &mut [], &mut work).expect("runs");
        let y = 10.0 * a;
        let z = if y > 20.0 {
            y - 20.0
        } else if y > 10.0 {
            2.0 * y
        } else {
            -y
        };
        assert_eq!(work, [y, z], "a = {a}");
    }
}
