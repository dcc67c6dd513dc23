//! Generated model texts shared by the tests of several crates: deep nesting of every kind
//! (hostile input for the front end), long chains (large models for the later stages) and a
//! network of dense constructor matrices.

/// Nesting depth of the hostile inputs.
pub const DEEP: usize = 10_000;

pub fn model_with_equation(rhs: &str) -> String {
    format!("model M\n  Real x;\nequation\n  x = {rhs};\nend M;\n")
}

pub fn nested_if_equations(depth: usize) -> String {
    format!(
        "model M\n  Real x;\nequation\n{}x = 1;\n{}end M;\n",
        "if c then\n".repeat(depth),
        "end if;\n".repeat(depth)
    )
}

pub fn nested_for_loops(depth: usize) -> String {
    format!(
        "model M\n  Real x;\nequation\n{}x = 1;\n{}end M;\n",
        "for i in 1:2, j loop\n".repeat(depth),
        "end for;\n".repeat(depth)
    )
}

pub fn nested_when_statements(depth: usize) -> String {
    format!(
        "function f\nalgorithm\n{}x := 1;\n{}end f;\n",
        "while true loop\nwhen c then\n".repeat(depth),
        "end when;\nend while;\n".repeat(depth)
    )
}

pub fn nested_classes(depth: usize) -> String {
    let mut text = String::new();
    for i in 0..depth {
        text.push_str(&format!("package P{i}\n"));
    }
    text.push_str("model M\n  Real x = 1;\nend M;\n");
    for i in (0..depth).rev() {
        text.push_str(&format!("end P{i};\n"));
    }
    text
}

/// A chain of `depth` component levels, `model M1 M2 m; end M1; model M2 M3 m; end M2; ...`,
/// the innermost with the state `x`, `der(x) = -x`; the model to check is `M1`, whose variable
/// is `m.m. ... .m.x` (`depth - 1` times `m.`).
pub fn component_chain(depth: usize) -> String {
    let mut text = String::new();
    for i in 1..depth {
        text.push_str(&format!("model M{i} M{} m; end M{i};\n", i + 1));
    }
    text.push_str(&format!(
        "model M{depth} Real x(start = 1, fixed = true); equation der(x) = -x; end M{depth};\n"
    ));
    text
}

/// A chain of `depth` classes, each extending the next (`model M1 extends M2; end M1; ...`), the
/// last with the state `x`, `der(x) = -x`; the model to check is `M1`.
pub fn extends_chain(depth: usize) -> String {
    let mut text = String::new();
    for i in 1..depth {
        text.push_str(&format!("model M{i} extends M{}; end M{i};\n", i + 1));
    }
    text.push_str(&format!(
        "model M{depth} Real x(start = 1, fixed = true); equation der(x) = -x; end M{depth};\n"
    ));
    text
}

/// A chain of `n` algebraic equations, each reading the one before.
pub fn chain_model(n: usize) -> String {
    format!(
        "model Chain
  parameter Integer n = {n};
  Real x[n];
equation
  x[1] = sin(time);
  for i in 2:n loop
    x[i] = x[i - 1] + sin(i*time);
  end for;
end Chain;
"
    )
}

/// A neural-network-like model with `n` hidden neurons whose parameter matrices are built by
/// array constructors: `W1[n, 2]`, `W2[n, n]` and `W3[2, n]`, the bias `b1[n]`, and
/// `h = tanh(W1*x + b1)`, `g = tanh(W2*h)`, `der(x) = W3*g - x`, `y = sum(g)`: about n^2 flat
/// multiply-adds, 2n + 3 equations and n^2 + 7n + 4 scalar variables.
pub fn dense_network(n: usize) -> String {
    format!(
        "model Net
  parameter Integer n = {n};
  parameter Real W1[n, 2] = {{{{sin(i*j) for j in 1:2}} for i in 1:n}};
  parameter Real b1[n] = {{0.1*i/n for i in 1:n}};
  parameter Real W2[n, n] = {{{{cos(i + j)/n for j in 1:n}} for i in 1:n}};
  parameter Real W3[2, n] = {{{{sin(i + 2*j)/n for j in 1:n}} for i in 1:2}};
  Real h[n];
  Real g[n];
  Real x[2](each start = 0.1, each fixed = true);
  Real y;
equation
  h = tanh(W1*x + b1);
  g = tanh(W2*h);
  der(x) = W3*g - x;
  y = sum(g);
end Net;
"
    )
}

/// An `if`/`elseif` chain of `n` branches choosing `u`, integrated into `x`: branch `i` is
/// `time < i·10^-3` and sets `u = i`, the `else` branch sets `u = -1`. For `n` > 1000, on
/// `((i-1)·10^-3, i·10^-3)` with `i` ≤ 1000 the value is `u = i`.
pub fn if_chain(n: usize) -> String {
    let mut text = String::from("model M\n  Real u;\n  Real x(start = 0, fixed = true);\nequation\n  der(x) = u;\n");
    text.push_str("  if time < 0 then\n    u = 0;\n");
    for i in 1..n {
        text.push_str(&format!("  elseif time < {i}e-3 then\n    u = {i};\n"));
    }
    text.push_str("  else\n    u = -1;\n  end if;\nend M;\n");
    text
}

/// `n` if-equations nested in each other's `then` branch, choosing `u`, integrated into `x`:
/// level `i` (from 0) is `if time >= i·10^-3 then <level i+1> else u = i; end if;`, the
/// innermost sets `u = n`. For `n` > 1000, on `((k-1)·10^-3, k·10^-3)` with `k` ≤ 1000 the
/// value is `u = k`, as in [`if_chain`].
pub fn nested_if_chain(n: usize) -> String {
    let mut text = String::from("model M\n  Real u;\n  Real x(start = 0, fixed = true);\nequation\n  der(x) = u;\n");
    for i in 0..n {
        text.push_str(&format!("if time >= {i}e-3 then\n"));
    }
    text.push_str(&format!("u = {n};\n"));
    for i in (0..n).rev() {
        text.push_str(&format!("else\nu = {i};\nend if;\n"));
    }
    text.push_str("end M;\n");
    text
}
