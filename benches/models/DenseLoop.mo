// Wide rows: an 80 x 80 dense linear loop (w) and 80 states coupled through the same parameter
// matrix, beside an array of 100 components with array variables. Solving each of the 80 rows for
// each of its unknowns was cubic in K; see benches/README.md.
model DenseLoop "A chain of M first-order cells (arrays of components with array variables) feeding a dense linear system of K unknowns (one algebraic loop) and K states coupled through the same dense matrix"
  model Cell
    parameter Integer n = 3;
    parameter Real a[n] = {1, 2, 3};
    Real x[n](each start = 1, each fixed = true);
    Real y[n];
    input Real u;
  equation
    der(x) = -a .* x + fill(u, n);
    y = 2 * x;
  end Cell;
  parameter Integer M = 100;
  parameter Integer K = 80;
  parameter Real A[K, K] = {{if i == j then -2.0 else 1.0 / (i + j) for j in 1:K} for i in 1:K};
  Cell cells[M](each n = 3);
  Real z[K](each start = 0, each fixed = true);
  Real w[K];
  Real s;
equation
  for i in 1:M loop
    cells[i].u = if i == 1 then 1.0 else cells[i - 1].y[3];
  end for;
  A * w = z + fill(s, K);
  der(z) = A * z + fill(cells[M].y[1], K);
  s = sum(w);
end DenseLoop;
